import { mkdtemp, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { currentSnapshot } from "../../shared/delta/index.ts";
import { withPrefix } from "../../shared/object-store/prefixed-object-store.ts";
import { tablePrefix } from "../../shared/store/bucket-layout.ts";
import { testObjectStore } from "../support/aws.ts";
import { startTestControlPlane, type TestControlPlane } from "../support/control-plane.ts";
import { sparkEngineReady } from "./spark-engine-ready.ts";

/**
 * `pipelines.engine: auto` (a threshold of one byte: whatever Spark can run goes there) over the
 * column types the Spark job once failed on, through the HTTP API on the local runtime, beside a
 * DuckDB-only twin:
 *
 * - a flow whose source declares a `VARCHAR[]` column runs on Spark (the job reads it as ARRAY);
 * - a view kept incrementally grouped by a DOUBLE stays on DuckDB before any job, its event saying why
 *   (Spark spells a DOUBLE's JSON otherwise, and the partials are bucketed by it);
 * - one grouped by a DATE is recomputed on Spark, and the next refresh on DuckDB merges into the
 *   partials it wrote (the bucket hash agrees);
 * - every view recomputed on Spark has the Delta schema of its DuckDB twin (an integer sum is
 *   DuckDB's HUGEINT, a cast to TIMESTAMP DuckDB's TIMESTAMP), and every table the same rows.
 */

const CATALOG = "spark_auto_typed";
const SCHEMA = { id: "BIGINT", price: "DOUBLE", day: "DATE", tags: "VARCHAR[]", amount: "INTEGER" };
const TABLES = ["raw", "by_price", "by_day", "stamped"] as const;
const ORDER: Record<(typeof TABLES)[number], string> = {
  raw: "id",
  by_price: "price NULLS FIRST",
  by_day: "day NULLS FIRST",
  stamped: "id",
};

const definition = (landing: string) => ({
  datasets: [
    {
      type: "streaming_table",
      name: "raw",
      flows: [
        {
          name: "ingest",
          source: { type: "auto_loader", path: landing, format: "json", schema: SCHEMA },
          sql: "SELECT id, price, day, tags, amount FROM source",
        },
      ],
    },
    {
      type: "materialized_view",
      name: "by_price",
      sql: "SELECT price, count(*) AS n, sum(amount) AS total FROM raw GROUP BY price",
    },
    {
      type: "materialized_view",
      name: "by_day",
      sql: "SELECT day, count(*) AS n, sum(amount) AS total, max(price) AS top FROM raw GROUP BY day",
    },
    {
      type: "materialized_view",
      name: "stamped",
      sql: "SELECT id, CAST(day AS TIMESTAMP) AS at, tags, amount + 1 AS next FROM raw WHERE amount IS NOT NULL",
    },
  ],
});

const row = (id: number) => ({
  id,
  price: id % 5 === 0 ? null : (id % 3) + 0.5,
  day: id % 7 === 0 ? null : `2026-0${(id % 3) + 1}-1${id % 4}`,
  tags: id % 4 === 0 ? null : [`t${id % 2}`, ...(id % 3 === 0 ? [null] : []), "x"],
  amount: id % 6 === 0 ? null : id * 3,
});

describe.skipIf(!sparkEngineReady)(
  "auto keeps off Spark, before any job, what Spark would compute otherwise",
  () => {
    let cp: TestControlPlane;
    let landing: string;
    beforeAll(async () => {
      cp = await startTestControlPlane();
      landing = await mkdtemp(path.join(cp.landing, "typed-"));
    });
    afterAll(async () => {
      await cp?.close();
      if (landing) await rm(landing, { recursive: true, force: true });
    });

    const land = async (file: number, ids: readonly number[]) =>
      writeFile(
        path.join(landing, `part-${file}.json`),
        ids.map((id) => JSON.stringify(row(id))).join("\n") + "\n",
      );
    const create = async (schema: string, configuration: Record<string, string>) =>
      (
        await cp.client.createPipeline({
          name: schema,
          catalog: CATALOG,
          schema,
          configuration,
          definition: definition(`${landing}/`),
        })
      ).pipeline_id;
    const run = async (pipelineId: string) => {
      const { update_id } = await cp.client.startUpdate(pipelineId);
      const update = await cp.client.waitForUpdate(pipelineId, update_id, {
        intervalMs: 250,
        timeoutMs: 900_000,
      });
      expect(update.state, JSON.stringify(update.error)).toBe("COMPLETED");
      return update_id;
    };
    /** Each flow's engine (and why it stayed off Spark) in the update's flow_progress events. */
    const engines = async (pipelineId: string, updateId: string) => {
      const { events } = await cp.client.events(pipelineId, {
        filter: `event_type = 'flow_progress' AND origin.update_id = '${updateId}'`,
        max_results: 100,
      });
      const found: Record<string, { engine: string; reason?: string }> = {};
      for (const e of events) {
        const progress = e.details["flow_progress"] as { engine?: string; engine_reason?: string };
        const flow = (e.origin as { flow_name?: string }).flow_name;
        if (flow && progress.engine)
          found[flow] = {
            engine: progress.engine,
            ...(progress.engine_reason ? { reason: progress.engine_reason } : {}),
          };
      }
      return found;
    };
    const schemaOf = async (schema: string, table: string) => {
      const store = withPrefix(testObjectStore(""), tablePrefix({ catalog: CATALOG, schema, table }));
      return JSON.parse((await currentSnapshot(store)).metadata.schemaString) as unknown;
    };
    const rowsOf = async (schema: string, table: (typeof TABLES)[number]) =>
      (
        await cp.client.query(`${CATALOG}.${schema}.${table}`, {
          sql: `SELECT * FROM t ORDER BY ${ORDER[table]}`,
        })
      ).rows;
    const sameAsTwin = async (what: string) => {
      for (const table of TABLES) {
        expect(await schemaOf("mixed", table), `${table}'s schema ${what}`).toEqual(
          await schemaOf("duck", table),
        );
        expect(await rowsOf("mixed", table), `${table}'s rows ${what}`).toEqual(await rowsOf("duck", table));
      }
    };

    it("runs a VARCHAR[] source and a DATE-keyed view on Spark, a DOUBLE-keyed view on DuckDB, with DuckDB's types", async () => {
      await land(
        0,
        Array.from({ length: 40 }, (_, i) => i + 1),
      );
      const duck = await create("duck", {});
      const mixed = await create("mixed", {
        "pipelines.engine": "auto",
        "pipelines.engine.autoThresholdBytes": "1 B",
      });
      await run(duck);
      const first = await run(mixed);
      const chosen = await engines(mixed, first);
      expect(chosen["ingest"]?.engine).toBe("spark");
      expect(chosen["by_day"]?.engine).toBe("spark");
      expect(chosen["stamped"]?.engine).toBe("spark");
      expect(chosen["by_price"]).toEqual({
        engine: "duckdb",
        reason: expect.stringContaining("its grouping key price is of type DOUBLE"),
      });
      await sameAsTwin("after the first load");
      expect(await schemaOf("mixed", "by_day")).toMatchObject({
        fields: expect.arrayContaining([expect.objectContaining({ name: "total", type: "decimal(38,0)" })]),
      });

      // The DATE-keyed view's next refresh is incremental on DuckDB, over the partials Spark wrote.
      await land(
        1,
        Array.from({ length: 25 }, (_, i) => i + 41),
      );
      await run(duck);
      const second = await run(mixed);
      expect((await engines(mixed, second))["by_day"]?.engine).toBe("duckdb");
      await sameAsTwin("after an incremental refresh over Spark's partials");
    }, 1_500_000);
  },
);
