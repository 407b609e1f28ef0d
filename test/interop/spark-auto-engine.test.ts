import { randomBytes } from "node:crypto";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { taskEnvironment } from "../../shared/engine/task-sizing.ts";
import { cappedTempFolders, mountCappedFolder } from "../support/capped-temp-folder.ts";
import { startTestControlPlane, type TestControlPlane } from "../support/control-plane.ts";
import { sparkEngineReady } from "./spark-engine-ready.ts";

/**
 * `pipelines.engine: auto` hands Spark the batch the task function could not take, on the local
 * runtime through the HTTP API, its functions' temporary folder a 12 MB tmpfs (as a Lambda's
 * `/tmp`, smaller) and their batch bound what the stack derives for it (a quarter: 3 MB):
 *
 * - a backlog larger than the folder: `duckdb` splits it into batches within the bound; `auto` with a
 *   threshold above the bound compares the whole backlog (the batch before the function's byte bound
 *   splits it) and runs it on Spark as one batch; a later small batch stays on DuckDB;
 * - one JSON file larger than the folder (a batch nothing can split): `duckdb` refuses it with
 *   BATCH_TOO_LARGE; `auto` with no threshold (the function's batch bytes, by default) runs it on Spark;
 * - a batch the function's bound admits (the flow raises `max_bytes_per_batch`) below `auto`'s
 *   threshold that fills the folder on DuckDB: `duckdb` re-plans it in halves; `auto` re-plans it
 *   whole for Spark, once, with a WARN event naming the flow and why.
 */

const CAP_MB = 12;
/** About 250 bytes a row: 10,000 rows are 2.5 MB of JSON. */
const NOTE = "x".repeat(200);

describe.skipIf(!sparkEngineReady || !cappedTempFolders)(
  "auto hands Spark the batch a function cannot take",
  () => {
    let cp: TestControlPlane;
    let cap: { dir: string; unmount(): void };
    let previousTmp: string | undefined;
    const previousEnv: Record<string, string | undefined> = {};
    beforeAll(async () => {
      cp = await startTestControlPlane();
      // The task functions of a 12 MB /tmp, from here on (Spark's driver starts under it too).
      const environment = taskEnvironment({
        memoryMb: 2048,
        ephemeralStorageMb: CAP_MB,
        timeoutSeconds: 900,
      });
      for (const [name, value] of Object.entries(environment)) {
        previousEnv[name] = process.env[name];
        process.env[name] = value;
      }
      cap = mountCappedFolder(CAP_MB);
      previousTmp = process.env["TMPDIR"];
      process.env["TMPDIR"] = cap.dir;
    }, 240_000);
    afterAll(async () => {
      await cp?.close();
      if (previousTmp === undefined) delete process.env["TMPDIR"];
      else process.env["TMPDIR"] = previousTmp;
      for (const [name, value] of Object.entries(previousEnv))
        if (value === undefined) delete process.env[name];
        else process.env[name] = value;
      cap?.unmount();
    });

    /** `files` JSON files of `rows` rows each (ids from `first`) in `folder` (under the landing folder, outside the cap). */
    const land = async (folder: string, files: number, rows: number, first = 0, note = () => NOTE) => {
      await mkdir(folder, { recursive: true });
      for (let f = 0; f < files; f++) {
        const start = first + f * rows;
        const lines = Array.from({ length: rows }, (_, i) =>
          JSON.stringify({ id: start + i, amount: ((start + i) * 7) % 1000, note: note() }),
        );
        await writeFile(path.join(folder, `part-${start}.json`), lines.join("\n") + "\n");
      }
    };
    const pipeline = async (
      schema: string,
      folder: string,
      configuration: Record<string, string>,
      flow: { options?: Record<string, unknown>; sql?: string } = {},
    ) => {
      const created = await cp.client.createPipeline({
        name: schema,
        catalog: "auto_engine",
        schema,
        configuration,
        definition: {
          datasets: [
            {
              type: "streaming_table",
              name: "orders",
              flows: [
                {
                  name: "ingest",
                  source: {
                    type: "auto_loader",
                    path: `${folder}/`,
                    format: "json",
                    schema: { id: "BIGINT", amount: "BIGINT", note: "VARCHAR" },
                  },
                  sql:
                    flow.sql ??
                    "SELECT id, CAST(amount AS DOUBLE) / 100 AS amount FROM source WHERE amount % 10 <> 0",
                  ...(flow.options ? { options: flow.options } : {}),
                },
              ],
            },
          ],
        },
      });
      return created.pipeline_id;
    };
    const run = async (pipelineId: string) => {
      const { update_id } = await cp.client.startUpdate(pipelineId);
      const update = await cp.client.waitForUpdate(pipelineId, update_id, {
        intervalMs: 250,
        timeoutMs: 240_000,
      });
      return { ...update, update_id };
    };
    const engines = async (pipelineId: string, updateId: string) => {
      const { events } = await cp.client.events(pipelineId, {
        filter: `event_type = 'flow_progress' AND origin.update_id = '${updateId}'`,
        max_results: 100,
      });
      return events
        .map((e) => (e.details["flow_progress"] as { engine?: string }).engine)
        .filter((engine) => engine !== undefined);
    };
    /** Rows the update's batches wrote (their flow_progress metrics): the table itself outgrows the folder a query reads it in. */
    const rowsWritten = async (pipelineId: string, updateId: string) => {
      const { events } = await cp.client.events(pipelineId, {
        filter: `event_type = 'flow_progress' AND origin.update_id = '${updateId}'`,
        max_results: 100,
      });
      return events
        .map((e) => (e.details["flow_progress"] as { metrics?: { num_output_rows?: number } }).metrics)
        .reduce((sum, metrics) => sum + Number(metrics?.num_output_rows ?? 0), 0);
    };
    const warnings = async (pipelineId: string, updateId: string) => {
      const { events } = await cp.client.events(pipelineId, {
        filter: `level = 'WARN' AND origin.update_id = '${updateId}'`,
        max_results: 100,
      });
      return events.map((e) => e.message);
    };
    const counts = async (schema: string) => {
      const { rows } = await cp.client.query(`auto_engine.${schema}.orders`, {
        sql: "SELECT count(*)::BIGINT AS n, count(DISTINCT id)::BIGINT AS d FROM t",
      });
      return { rows: Number(rows[0]!["n"]), ids: Number(rows[0]!["d"]) };
    };
    /** Of `n` ids from 0, those the flow keeps (amount not a multiple of 10). */
    const kept = (n: number, first = 0) =>
      Array.from({ length: n }, (_, i) => ((first + i) * 7) % 1000).filter((a) => a % 10 !== 0).length;

    it("a backlog larger than the folder: duckdb splits it, auto (threshold above the bound) runs it whole on Spark", async () => {
      const folder = await mkdtemp(path.join(cp.landing, "backlog-"));
      try {
        await land(folder, 6, 10_000); // 6 files of 2.5 MB: 15 MB, more than the 12 MB folder
        const onDuck = await pipeline("backlog_duckdb", folder, {});
        const duck = await run(onDuck);
        expect(duck.state, JSON.stringify(duck.error)).toBe("COMPLETED");
        expect(await engines(onDuck, duck.update_id)).toEqual(Array(6).fill("duckdb"));

        const onAuto = await pipeline("backlog_auto", folder, {
          "pipelines.engine": "auto",
          "pipelines.engine.autoThresholdBytes": "8 MB",
        });
        const auto = await run(onAuto);
        expect(auto.state, JSON.stringify(auto.error)).toBe("COMPLETED");
        expect(await engines(onAuto, auto.update_id)).toEqual(["spark"]);
        expect(await counts("backlog_auto")).toEqual({ rows: kept(60_000), ids: kept(60_000) });
        expect(await counts("backlog_auto")).toEqual(await counts("backlog_duckdb"));

        // The next small batch is under the threshold: DuckDB.
        await land(folder, 1, 100, 60_000);
        const next = await run(onAuto);
        expect(next.state, JSON.stringify(next.error)).toBe("COMPLETED");
        expect(await engines(onAuto, next.update_id)).toEqual(["duckdb"]);
        expect((await counts("backlog_auto")).rows).toBe(kept(60_100));
      } finally {
        await rm(folder, { recursive: true, force: true });
      }
    });

    it("one JSON file larger than the folder: duckdb refuses it, auto with the default threshold runs it on Spark", async () => {
      const folder = await mkdtemp(path.join(cp.landing, "file-"));
      try {
        await land(folder, 1, 64_000); // one file of 16 MB
        const onDuck = await pipeline("file_duckdb", folder, {});
        const duck = await run(onDuck);
        expect(duck.state).toBe("FAILED");
        expect(JSON.stringify(duck.error)).toContain("BATCH_TOO_LARGE");

        const onAuto = await pipeline("file_auto", folder, { "pipelines.engine": "auto" });
        const auto = await run(onAuto);
        expect(auto.state, JSON.stringify(auto.error)).toBe("COMPLETED");
        expect(await engines(onAuto, auto.update_id)).toEqual(["spark"]);
        expect(await counts("file_auto")).toEqual({ rows: kept(64_000), ids: kept(64_000) });
      } finally {
        await rm(folder, { recursive: true, force: true });
      }
    });

    it("a batch that fills the folder on DuckDB: duckdb halves it, auto re-plans it whole for Spark, once", async () => {
      const folder = await mkdtemp(path.join(cp.landing, "outgrown-"));
      try {
        // 8 files of 10,000 rows with a note that does not compress (300 characters of base64): the
        // written Parquet (about 18 MB) fills the 12 MB folder; a quarter of it fits.
        await land(folder, 8, 10_000, 0, () => randomBytes(225).toString("base64"));
        // The flow admits all 8 files in one batch, and auto's threshold keeps it on DuckDB by size.
        const flow = {
          options: { max_bytes_per_batch: "1 GB" },
          sql: "SELECT id, CAST(amount AS DOUBLE) / 100 AS amount, note FROM source WHERE amount % 10 <> 0",
        };
        const onDuck = await pipeline("outgrown_duckdb", folder, {}, flow);
        const duck = await run(onDuck);
        expect(duck.state, JSON.stringify(duck.error)).toBe("COMPLETED");
        const duckEngines = await engines(onDuck, duck.update_id);
        expect(duckEngines.length).toBeGreaterThan(1);
        expect(new Set(duckEngines)).toEqual(new Set(["duckdb"]));
        const halved = await warnings(onDuck, duck.update_id);
        expect(halved).toContainEqual(
          expect.stringMatching(/^Flow 'ingest' re-planned batch 1 \(8 files, .*\) as batch 2 \(4 files, /),
        );

        const onAuto = await pipeline(
          "outgrown_auto",
          folder,
          { "pipelines.engine": "auto", "pipelines.engine.autoThresholdBytes": "1 GB" },
          flow,
        );
        const auto = await run(onAuto);
        expect(auto.state, JSON.stringify(auto.error)).toBe("COMPLETED");
        expect(await engines(onAuto, auto.update_id)).toEqual(["spark"]);
        const warned = await warnings(onAuto, auto.update_id);
        expect(warned).toHaveLength(1);
        expect(warned[0]).toMatch(
          /^Flow 'ingest' re-planned batch 1 \(8 files, .*\) as batch 2 \(8 files, .*\): it failed for its size on DuckDB \((ENOSPC|TEMP_SPACE_EXHAUSTED).*\); planned again whole, for the Spark engine/,
        );
        // Every row once: the abandoned DuckDB batch committed nothing.
        expect(await rowsWritten(onAuto, auto.update_id)).toBe(kept(80_000));
        expect(await rowsWritten(onDuck, duck.update_id)).toBe(kept(80_000));

        // The next batch is planned afresh: small, it runs on DuckDB.
        await land(folder, 1, 100, 80_000);
        const next = await run(onAuto);
        expect(next.state, JSON.stringify(next.error)).toBe("COMPLETED");
        expect(await engines(onAuto, next.update_id)).toEqual(["duckdb"]);
        expect(await rowsWritten(onAuto, next.update_id)).toBe(kept(100, 80_000));
      } finally {
        await rm(folder, { recursive: true, force: true });
      }
    });
  },
);
