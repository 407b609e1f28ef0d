import { readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { parseDocument } from "yaml";
import { tablePropertiesError } from "../shared/delta/index.ts";
import { SqlReferenceParser } from "../shared/pipeline/sql-references.ts";
import { validatePipeline } from "../shared/pipeline/validate-pipeline.ts";
import { readPipelineProject } from "../shared/project/index.ts";
import { projectFolder } from "../test/unit/project/project-files.ts";
import { startBenchPlane } from "./bench-plane.ts";

/**
 * Deploying a 50-file pipeline project (issue 36): the validate time of `ebb deploy` on the control
 * plane, in two parts, median of `EBB_BENCH_RUNS` (default 7):
 *
 * 1. The project front end: spec, globs, 50 SQL files parsed, the dataflow graph across them.
 * 2. Ebb's validation of the built definition (each query parsed by DuckDB, references, cycles),
 *    which a YAML definition of the same pipeline costs too.
 *
 * The project: one file ingests JSON files with read_files; 24 files each clean the previous table
 * as a stream (a chain), and 25 files each define a materialized view over one of them, listed in
 * reverse so no file is defined before what it reads.
 *
 * 3. An update of a project against its YAML twin on the local runtime, through the API:
 *    examples/orders-project (Spark SQL) and examples/orders/pipeline.yaml with the project's two
 *    expectations added (DuckDB SQL), each over its own landing folder; every round lands the same
 *    1,000-row file in both and runs one update of each, alternating which goes first. Median update
 *    time of `EBB_BENCH_UPDATES` rounds (default 9) each; the bound is 5% slower at most.
 */

const RUNS = Number(process.env["EBB_BENCH_RUNS"] ?? 7);
const FILES = 50;

function project() {
  const files = new Map<string, string>();
  files.set(
    "transformations/000_raw.sql",
    "CREATE OR REFRESH STREAMING TABLE t0 AS SELECT * FROM STREAM read_files('${landing}', format => 'json', schema => 'id BIGINT, v BIGINT, region STRING');",
  );
  const chain = FILES / 2 - 1;
  for (let i = 1; i <= chain; i++) {
    files.set(
      `transformations/${String(FILES - i).padStart(3, "0")}_t${i}.sql`,
      `CREATE OR REFRESH STREAMING TABLE t${i} (\n  CONSTRAINT positive EXPECT (v > 0) ON VIOLATION DROP ROW\n)\nAS SELECT id, v + ${i} AS v, upper(region) AS region\nFROM STREAM(t${i - 1})\nWHERE id IS NOT NULL;`,
    );
  }
  for (let i = 0; files.size < FILES; i++) {
    files.set(
      `views/m${i}.sql`,
      `CREATE MATERIALIZED VIEW m${i} AS\nSELECT region, count(*) AS n, sum(v) AS total\nFROM t${i % (chain + 1)}\nGROUP BY region;`,
    );
  }
  return {
    specPath: "spark-pipeline.yml",
    spec: "name: bench\ncatalog: bench\ndatabase: fifty\nconfiguration:\n  landing: s3://bench-landing/in\nlibraries:\n  - glob:\n      include: ['transformations/**', 'views/*.sql']\n",
    files,
  };
}

const UPDATES = Number(process.env["EBB_BENCH_UPDATES"] ?? 9);

/** The YAML twin of examples/orders-project: the demo pipeline with the project's expectations. */
async function yamlTwin(landing: string) {
  const text = (await readFile("examples/orders/pipeline.yaml", "utf8")).replaceAll("${LANDING}", landing);
  const { datasets, ...settings } = parseDocument(text).toJS() as {
    datasets: Record<string, unknown>[];
  };
  const expectations: Record<string, unknown> = {
    orders: [{ name: "valid_id", condition: "id IS NOT NULL", on_violation: "drop" }],
    revenue_by_region: [{ name: "has_orders", condition: "orders > 0", on_violation: "warn" }],
  };
  return {
    ...settings,
    catalog: "bench_yaml",
    definition: {
      datasets: datasets.map((d) =>
        expectations[String(d["name"])] ? { ...d, expectations: expectations[String(d["name"])] } : d,
      ),
    },
  };
}

async function updateAgainstYamlTwin(): Promise<void> {
  const bench = await startBenchPlane("ebb-bench-project-");
  try {
    const files = projectFolder("examples/orders-project");
    const spec = files.get("spark-pipeline.yml")!;
    files.delete("spark-pipeline.yml");
    const folders = { project: path.join(bench.landing, "project"), yaml: path.join(bench.landing, "yaml") };
    const { mkdir } = await import("node:fs/promises");
    for (const folder of Object.values(folders)) await mkdir(folder, { recursive: true });
    const ids = {
      project: (
        await bench.client.createPipeline({
          project: { spec, files: Object.fromEntries(files) },
          configuration: { landing: folders.project },
        })
      ).pipeline_id,
      yaml: (await bench.client.createPipeline(await yamlTwin(folders.yaml))).pipeline_id,
    };
    const times = { project: [] as number[], yaml: [] as number[] };
    const update = async (which: "project" | "yaml") => {
      const t0 = performance.now();
      const { update_id } = await bench.client.startUpdate(ids[which]);
      const done = await bench.client.waitForUpdate(ids[which], update_id, { intervalMs: 20 });
      if (done.state !== "COMPLETED")
        throw new Error(`bench ${which} update ${done.state}: ${done.error?.message ?? ""}`);
      return performance.now() - t0;
    };
    // Round 0 warms both (first query plans, the Spark translator's load); it is not counted.
    for (let round = 0; round <= UPDATES; round++) {
      const rows = Array.from({ length: 1000 }, (_, i) => {
        const id = round * 1000 + i;
        return JSON.stringify({
          id: i % 97 === 0 ? null : id,
          amount_cents: id % 10_000,
          region: ["us", "eu", "apac"][id % 3],
        });
      }).join("\n");
      for (const folder of Object.values(folders)) await writeFile(path.join(folder, `${round}.json`), rows);
      const order = round % 2 === 0 ? (["project", "yaml"] as const) : (["yaml", "project"] as const);
      for (const which of order) {
        const ms = await update(which);
        if (round > 0) times[which].push(ms);
      }
    }
    const project = median(times.project);
    const yaml = median(times.yaml);
    console.log(`update of examples/orders-project vs its YAML twin (median of ${UPDATES} updates each):`);
    console.log(`  project (Spark SQL):  ${project.toFixed(0)} ms`);
    console.log(`  YAML twin (DuckDB):   ${yaml.toFixed(0)} ms`);
    console.log(`  project / YAML:       ${((project / yaml - 1) * 100).toFixed(1)}% (bound: +5%)`);
  } finally {
    await bench.close();
  }
}

function median(samples: number[]): number {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

export async function run(): Promise<void> {
  const input = project();
  const parser = await SqlReferenceParser.open();
  try {
    const front: number[] = [];
    const validate: number[] = [];
    const validateCpu: number[] = [];
    let datasets = 0;
    for (let i = 0; i < RUNS; i++) {
      const t0 = performance.now();
      const built = readPipelineProject(input);
      const t1 = performance.now();
      const cpu0 = process.cpuUsage();
      const validated = await validatePipeline(built.definition, parser, tablePropertiesError);
      const t2 = performance.now();
      const cpu = process.cpuUsage(cpu0);
      validateCpu.push((cpu.user + cpu.system) / 1000);
      front.push(t1 - t0);
      validate.push(t2 - t1);
      datasets = validated.definition.datasets.length;
    }
    console.log(`project of ${input.files.size} SQL files, ${datasets} datasets (median of ${RUNS}):`);
    console.log(`  front end (spec, globs, parse, graph): ${median(front).toFixed(1)} ms`);
    console.log(`  Ebb validation of the built pipeline:  ${median(validate).toFixed(1)} ms`);
    // CPU time as well: on a shared machine the wall time mostly measures the other processes.
    console.log(`  its CPU time (DuckDB's threads too):  ${median(validateCpu).toFixed(1)} ms`);
    console.log(
      `  validate total:                        ${(median(front) + median(validate)).toFixed(1)} ms`,
    );
  } finally {
    parser.close();
  }
  await updateAgainstYamlTwin();
}
