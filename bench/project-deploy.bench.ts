import { performance } from "node:perf_hooks";
import { tablePropertiesError } from "../shared/delta/index.ts";
import { SqlReferenceParser } from "../shared/pipeline/sql-references.ts";
import { validatePipeline } from "../shared/pipeline/validate-pipeline.ts";
import { readPipelineProject } from "../shared/project/index.ts";

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
}
