import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type {
  MaterializedViewDefinition,
  PipelineDefinition,
  StreamingTableDefinition,
} from "../../../shared/pipeline/definition-schema.ts";
import { chooseEngine } from "../../../shared/engine/spark/engine-choice.ts";
import {
  chooseViewEngine,
  type ViewEngineQuestion,
} from "../../../shared/engine/spark/view-engine-choice.ts";
import type { BatchEngine, EngineSetting } from "../../../shared/pipeline/pipeline-settings.ts";

const MB = 1024 ** 2;
const view = (sql = "SELECT k, row_number() OVER (ORDER BY id) AS place FROM raw") =>
  ({ type: "materialized_view", name: "ranked", sql }) as MaterializedViewDefinition;
const ask = (question: Partial<ViewEngineQuestion>) =>
  chooseViewEngine({
    setting: { kind: "fixed", engine: "spark" },
    pipeline: { datasets: [] } as unknown as PipelineDefinition,
    view: view(),
    readViews: [],
    incrementalRefresh: false,
    inputBytes: MB,
    functionBatchBytes: 128 * MB,
    ...question,
  });

describe("the engine a materialized view's recompute runs on", () => {
  it("recomputes on Spark when the pipeline or the update asks for it, on DuckDB when either says duckdb", () => {
    expect(ask({})).toEqual({ engine: "spark" });
    expect(ask({ setting: { kind: "fixed", engine: "duckdb" }, override: "spark" })).toEqual({
      engine: "spark",
    });
    expect(ask({ override: "duckdb" })).toEqual({ engine: "duckdb" });
    expect(ask({ setting: undefined })).toEqual({ engine: "duckdb" });
  });

  it("keeps an incremental refresh on DuckDB whatever the engine (it reads only the rows its input gained)", () => {
    const settings: (EngineSetting | undefined)[] = [
      undefined,
      { kind: "fixed", engine: "spark" },
      { kind: "auto", minBytes: 0 },
    ];
    for (const setting of settings)
      for (const override of [undefined, "spark" as const])
        expect(ask({ setting, override, incrementalRefresh: true })).toEqual({ engine: "duckdb" });
  });

  it("recomputes a view kept incrementally in full on the engine asked for (the job writes its partials too)", () => {
    const grouped = view("SELECT k, count(*) AS n, sum(amount) AS total FROM raw GROUP BY k");
    expect(ask({ view: grouped })).toEqual({ engine: "spark" });
    expect(ask({ view: grouped, setting: undefined, override: "spark" })).toEqual({ engine: "spark" });
    expect(ask({ view: grouped, setting: { kind: "auto", minBytes: MB }, inputBytes: MB })).toEqual({
      engine: "spark",
    });
    expect(ask({ view: grouped, setting: { kind: "auto", minBytes: MB }, inputBytes: MB - 1 })).toEqual({
      engine: "duckdb",
    });
  });

  it("refuses a view written for DuckDB (its SQL, a view it reads, an expectation) when Spark is asked for", () => {
    const refusals = [
      ask({ view: view("SELECT id::VARCHAR AS id FROM raw") }),
      ask({ readViews: [{ name: "big", sql: "SELECT * EXCLUDE (k) FROM raw" }] }),
      ask({
        view: {
          ...view(),
          expectations: [{ name: "dated", condition: "strftime(day, '%Y') > '2000'", on_violation: "warn" }],
        } as MaterializedViewDefinition,
      }),
    ];
    for (const choice of refusals) expect(choice.engine).toBe("refused");
    expect("reason" in refusals[1]! ? refusals[1].reason : "").toContain("view big, which it reads");
    // Under `auto` the same view stays on DuckDB, whatever its size.
    expect(
      ask({ setting: { kind: "auto", minBytes: 1 }, view: view("SELECT id::VARCHAR AS id FROM raw") }),
    ).toEqual({
      engine: "duckdb",
      keptOffSpark: "its SQL is written for DuckDB (a :: cast; Spark writes CAST(x AS type))",
    });
  });

  it("keeps a view off Spark whose grouping key Spark spells otherwise in JSON, naming the key, its type and the cast", () => {
    const grouped = view("SELECT price, count(*) AS n FROM raw GROUP BY price");
    const keys = [{ sql: "price", duckType: "DOUBLE" }];
    const choice = ask({ view: grouped, keys });
    expect(choice).toMatchObject({
      engine: "refused",
      reason: expect.stringContaining("grouping key price is of type DOUBLE"),
      wayOut: expect.stringContaining("CAST(price AS VARCHAR)"),
    });
    // Under `auto` it stays on DuckDB, whatever its size, with why; the same under Spark SQL.
    const auto = ask({ view: grouped, keys, setting: { kind: "auto", minBytes: 0 } });
    expect(auto).toMatchObject({ engine: "duckdb", keptOffSpark: expect.stringContaining("DOUBLE") });
    const pipeline = {
      datasets: [],
      configuration: { "pipelines.sqlDialect": "spark" },
    } as unknown as PipelineDefinition;
    expect(ask({ view: grouped, keys, pipeline }).engine).toBe("refused");
  });

  it("computes on Spark a view grouped by keys both engines spell alike (DATE and TIMESTAMP among them)", () => {
    const grouped = view("SELECT day, k, count(*) AS n FROM raw GROUP BY day, k");
    for (const duckType of [
      "DATE",
      "TIMESTAMP",
      "BIGINT",
      "VARCHAR",
      "BOOLEAN",
      "INTEGER",
      "SMALLINT",
      "TINYINT",
    ])
      expect(
        ask({
          view: grouped,
          keys: [
            { sql: "day", duckType },
            { sql: "k", duckType: "BIGINT" },
          ],
        }),
      ).toEqual({
        engine: "spark",
      });
    for (const duckType of [
      "DOUBLE",
      "FLOAT",
      "DECIMAL(10,2)",
      "TIMESTAMP WITH TIME ZONE",
      "VARCHAR[]",
      "UUID",
    ])
      expect(
        ask({
          view: grouped,
          keys: [
            { sql: "k", duckType: "BIGINT" },
            { sql: "day", duckType },
          ],
        }).engine,
      ).toBe("refused");
  });

  it("runs a view written for DuckDB on Spark when the pipeline says its SQL is Spark SQL", () => {
    const pipeline = {
      datasets: [],
      configuration: { "pipelines.sqlDialect": "spark" },
    } as unknown as PipelineDefinition;
    expect(ask({ pipeline, view: view("SELECT id::VARCHAR AS id FROM raw") })).toEqual({ engine: "spark" });
  });

  it("under `auto` recomputes on Spark exactly when its planned input reaches the threshold", () => {
    fc.assert(
      fc.property(
        fc.nat({ max: 4 * MB }),
        fc.option(fc.nat({ max: 4 * MB }), { nil: undefined }),
        fc.nat({ max: 4 * MB }),
        (inputBytes, minBytes, functionBatchBytes) => {
          const setting: EngineSetting = { kind: "auto", ...(minBytes !== undefined ? { minBytes } : {}) };
          const expected: BatchEngine =
            minBytes !== undefined
              ? inputBytes >= minBytes
                ? "spark"
                : "duckdb"
              : inputBytes > functionBatchBytes
                ? "spark"
                : "duckdb";
          expect(ask({ setting, inputBytes, functionBatchBytes }).engine).toBe(expected);
        },
      ),
    );
  });
});

describe("a streaming flow that reads other datasets", () => {
  const flow = {
    name: "enrich",
    source: { type: "stream", dataset: "raw" },
    sql: "SELECT s.id, r.place FROM source s LEFT JOIN ranked r ON r.id = s.id",
  } as StreamingTableDefinition["flows"][number];
  const table = { type: "streaming_table", name: "enriched", flows: [flow] } as StreamingTableDefinition;
  const question = {
    setting: { kind: "fixed", engine: "spark" } as const,
    size: undefined,
    pipeline: { datasets: [table] } as PipelineDefinition,
    dataset: table,
    flow,
  };

  it("runs on Spark (a stream-static join: the job reads the planned files of each table)", () => {
    expect(chooseEngine({ ...question, readViews: [] })).toEqual({ engine: "spark" });
    expect(chooseEngine({ ...question, readViews: [{ name: "big", sql: "SELECT id FROM raw" }] })).toEqual({
      engine: "spark",
    });
  });

  it("is refused on Spark when a view it reads is written for DuckDB, and stays on DuckDB under `auto`", () => {
    const readViews = [{ name: "big", sql: "SELECT id::VARCHAR FROM raw" }];
    const refused = chooseEngine({ ...question, readViews });
    expect(refused.engine).toBe("refused");
    expect("reason" in refused ? refused.reason : "").toContain(
      "view big, which it reads, is written for DuckDB",
    );
    expect(
      chooseEngine({ ...question, setting: { kind: "auto", minBytes: 0 }, size: { bytes: MB }, readViews }),
    ).toEqual({ engine: "duckdb", keptOffSpark: expect.stringContaining("view big, which it reads") });
  });
});
