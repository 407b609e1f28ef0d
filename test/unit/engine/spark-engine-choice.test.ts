import { describe, expect, it } from "vitest";
import type {
  PipelineDefinition,
  StreamingTableDefinition,
} from "../../../shared/pipeline/definition-schema.ts";
import {
  chooseEngine,
  mayRunOnSpark,
  outgrownBatchGoesToSpark,
} from "../../../shared/engine/spark/engine-choice.ts";
import type { EngineSetting } from "../../../shared/pipeline/pipeline-settings.ts";

const flow = {
  name: "ingest",
  source: { type: "auto_loader", path: "/landing", format: "json" },
  sql: "SELECT id FROM source",
} as StreamingTableDefinition["flows"][number];
const kafkaFlow = (security: object = { protocol: "PLAINTEXT" }) =>
  ({
    ...flow,
    source: { type: "kafka", bootstrap_servers: ["broker:9092"], topic: "orders", security },
  }) as unknown as StreamingTableDefinition["flows"][number];
const kinesisFlow = {
  ...flow,
  source: { type: "kinesis", stream: "orders" },
} as unknown as StreamingTableDefinition["flows"][number];
const dataset = (extra: Partial<StreamingTableDefinition> = {}) =>
  ({ type: "streaming_table", name: "raw", flows: [flow], ...extra }) as StreamingTableDefinition;
const ask = (table: StreamingTableDefinition) =>
  chooseEngine({
    setting: { kind: "fixed", engine: "spark" },
    size: undefined,
    pipeline: { datasets: [table] } as PipelineDefinition,
    dataset: table,
    flow,
    readViews: [],
  });

describe("the engine a batch runs on", () => {
  it("runs a kafka source on Spark (the job reads the planned offsets), but refuses Kinesis and MSK IAM by name", () => {
    const askFlow = (f: StreamingTableDefinition["flows"][number]) => {
      const table = dataset({ flows: [f] });
      return chooseEngine({
        setting: { kind: "fixed", engine: "spark" },
        size: undefined,
        pipeline: { datasets: [table] } as PipelineDefinition,
        dataset: table,
        flow: f,
        readViews: [],
      });
    };
    expect(askFlow(kafkaFlow())).toEqual({ engine: "spark" });
    expect(askFlow(kinesisFlow)).toMatchObject({
      engine: "refused",
      reason: /Kinesis connector is a streaming source/,
    });
    expect(askFlow(kafkaFlow({ protocol: "SASL_SSL", sasl: { mechanism: "AWS_MSK_IAM" } }))).toMatchObject({
      engine: "refused",
      reason: /AWS_MSK_IAM/,
    });
  });

  it("runs a plain flow on Spark when the pipeline asks for it", () => {
    expect(ask(dataset())).toEqual({ engine: "spark" });
  });

  it("runs a partitioned table's flow on Spark; every stateful operator runs there over Ebb's state layout", () => {
    expect(ask(dataset({ partition_by: ["day"] }))).toEqual({ engine: "spark" });
  });

  it("runs a dataset with expectations on Spark: the job evaluates them", () => {
    const choice = ask(
      dataset({
        expectations: [{ name: "has_id", condition: "id IS NOT NULL", on_violation: "drop" }],
      } as Partial<StreamingTableDefinition>),
    );
    expect(choice).toEqual({ engine: "spark" });
  });

  it("runs an AUTO CDC flow on Spark: the job runs its SQL, Ebb applies the events by key", () => {
    const cdc = {
      ...flow,
      auto_cdc: { keys: ["id"], sequence_by: "id", stored_as_scd_type: 2 },
    } as StreamingTableDefinition["flows"][number];
    const table = dataset({ flows: [cdc] });
    const choice = chooseEngine({
      setting: { kind: "fixed", engine: "spark" },
      size: undefined,
      pipeline: { datasets: [table] } as PipelineDefinition,
      dataset: table,
      flow: cdc,
      readViews: [],
    });
    expect(choice).toEqual({ engine: "spark" });
  });

  it("runs a reader of a change feed on Spark: the job reads the files Ebb planned", () => {
    const upstream = dataset({
      name: "current",
      flows: [{ ...flow, auto_cdc: { keys: ["id"], sequence_by: "id" } }],
    } as Partial<StreamingTableDefinition>);
    const explicit = {
      ...flow,
      name: "follow",
      source: { type: "stream", dataset: "raw" },
      options: { read_change_feed: true },
    };
    const implicit = { ...flow, name: "follow_cdc", source: { type: "stream", dataset: "current" } };
    for (const reader of [explicit, implicit] as StreamingTableDefinition["flows"]) {
      const table = dataset({ name: "changes", flows: [reader] });
      const choice = chooseEngine({
        setting: { kind: "fixed", engine: "spark" },
        size: undefined,
        pipeline: { datasets: [upstream, table] } as PipelineDefinition,
        dataset: table,
        flow: reader,
        readViews: [],
      });
      expect(choice).toEqual({ engine: "spark" });
    }
  });

  it("refuses Spark for an expectation written for DuckDB, naming it", () => {
    const choice = ask(
      dataset({
        expectations: [{ name: "has_id", condition: "id::VARCHAR <> ''", on_violation: "drop" }],
      } as Partial<StreamingTableDefinition>),
    );
    expect(choice.engine).toBe("refused");
    expect("reason" in choice ? choice.reason : "").toContain(
      'expectation "has_id" of dataset "raw" is written for DuckDB (a :: cast',
    );
  });

  describe("auto", () => {
    const table = dataset();
    const autoAsk = (setting: EngineSetting, bytes: number, override?: "duckdb" | "spark") => {
      const question = {
        setting,
        ...(override ? { override } : {}),
        pipeline: { datasets: [table] } as PipelineDefinition,
        dataset: table,
        flow,
        readViews: [],
        functionBatchBytes: 128 * 1024 ** 2,
      };
      return { ...chooseEngine({ ...question, size: { files: 3, bytes } }), whole: mayRunOnSpark(question) };
    };
    const MB = 1024 ** 2;

    it("with no threshold, hands Spark a batch above the function's batch bytes (one it would split)", () => {
      expect(autoAsk({ kind: "auto" }, 128 * MB)).toEqual({ engine: "duckdb", whole: true });
      expect(autoAsk({ kind: "auto" }, 128 * MB + 1)).toEqual({ engine: "spark", whole: true });
    });

    it("with a threshold, hands Spark a batch of at least that many bytes", () => {
      const setting = { kind: "auto", minBytes: 512 * MB } as const;
      expect(autoAsk(setting, 512 * MB - 1)).toEqual({ engine: "duckdb", whole: true });
      expect(autoAsk(setting, 512 * MB)).toEqual({ engine: "spark", whole: true });
    });

    it("hands Spark a batch DuckDB failed for its size whatever its size, under auto only", () => {
      const question = {
        setting: { kind: "auto", minBytes: 512 * MB } as const,
        pipeline: { datasets: [table] } as PipelineDefinition,
        dataset: table,
        flow,
        readViews: [],
        size: { files: 1, bytes: MB },
        outgrewDuckDb: "TEMP_SPACE_EXHAUSTED: disk",
      };
      expect(chooseEngine(question)).toEqual({ engine: "spark" });
      expect(outgrownBatchGoesToSpark(question)).toBe(true);
      // The update's own engine, or a fixed duckdb, keeps the halving on DuckDB.
      expect(outgrownBatchGoesToSpark({ ...question, override: "duckdb" })).toBe(false);
      expect(outgrownBatchGoesToSpark({ ...question, setting: { kind: "fixed", engine: "duckdb" } })).toBe(
        false,
      );
      expect(chooseEngine({ ...question, setting: { kind: "fixed", engine: "duckdb" } })).toEqual({
        engine: "duckdb",
      });
      // A flow Spark cannot run stays on DuckDB.
      const kinesis = { ...question, flow: kinesisFlow };
      expect(outgrownBatchGoesToSpark(kinesis)).toBe(false);
      expect(chooseEngine(kinesis)).toEqual({
        engine: "duckdb",
        keptOffSpark: expect.stringContaining("kinesis sources run on DuckDB only"),
      });
    });

    it("plans whole only where Spark may run the batch: not under the update's duckdb, nor for a flow Spark cannot run", () => {
      expect(autoAsk({ kind: "auto" }, 1024 * MB, "duckdb")).toEqual({ engine: "duckdb", whole: false });
      expect(autoAsk({ kind: "fixed", engine: "duckdb" }, 1024 * MB, "spark").whole).toBe(true);
      expect(autoAsk({ kind: "fixed", engine: "duckdb" }, 1024 * MB).whole).toBe(false);
      const question = {
        setting: { kind: "auto" } as const,
        pipeline: { datasets: [table] } as PipelineDefinition,
        dataset: table,
        flow,
        readViews: [],
      };
      expect(mayRunOnSpark(question)).toBe(true);
      expect(mayRunOnSpark({ ...question, flow: kinesisFlow })).toBe(false);
      expect(mayRunOnSpark({ ...question, flow: kafkaFlow() })).toBe(true);
    });
  });

  it("reads declared list columns on Spark, but refuses what the job cannot read before a batch runs", () => {
    const withSchema = (format: string, schema: Record<string, string>) => {
      const f = {
        ...flow,
        source: { type: "auto_loader", path: "/landing", format, schema },
      } as StreamingTableDefinition["flows"][number];
      const table = dataset({ flows: [f] });
      const question = {
        size: undefined,
        pipeline: { datasets: [table] } as PipelineDefinition,
        dataset: table,
        flow: f,
        readViews: [],
      };
      return {
        spark: chooseEngine({ ...question, setting: { kind: "fixed", engine: "spark" } }),
        auto: chooseEngine({
          ...question,
          setting: { kind: "auto", minBytes: 0 },
          size: { files: 1, bytes: 1024 ** 2 },
        }),
      };
    };
    const lists = { id: "BIGINT", tags: "VARCHAR[]", scores: "decimal(10, 2)[]", at: "TIMESTAMPTZ" };
    expect(withSchema("json", lists)).toEqual({ spark: { engine: "spark" }, auto: { engine: "spark" } });
    expect(withSchema("parquet", lists).spark).toEqual({ engine: "spark" });
    // Spark's CSV reader has no lists; a type the job does not map is refused by name.
    const csv = withSchema("csv", { id: "BIGINT", tags: "VARCHAR[]" });
    expect(csv.spark).toMatchObject({
      engine: "refused",
      reason: "its source's column tags is declared VARCHAR[], and Spark reads no list from a CSV file",
      wayOut: expect.stringContaining("declare tags as VARCHAR"),
    });
    expect(csv.auto).toMatchObject({
      engine: "duckdb",
      keptOffSpark: expect.stringContaining("column tags"),
    });
    for (const declared of ["UUID", "STRUCT(a INTEGER)", "MAP(VARCHAR, INTEGER)", "VARCHAR[3]", "HUGEINT"])
      expect(withSchema("json", { v: declared }).spark).toMatchObject({
        engine: "refused",
        reason: `its source's column v is declared ${declared}, a type the Spark job does not read`,
      });
  });

  it("refuses Spark for an AUTO CDC condition written for DuckDB, naming the setting", () => {
    const cdc = {
      ...flow,
      auto_cdc: {
        keys: ["id"],
        sequence_by: "id",
        stored_as_scd_type: 1,
        apply_as_deletes: "op::VARCHAR = 'D'",
      },
    } as StreamingTableDefinition["flows"][number];
    const table = dataset({ flows: [cdc] });
    const choice = chooseEngine({
      setting: { kind: "fixed", engine: "spark" },
      size: undefined,
      pipeline: { datasets: [table] } as PipelineDefinition,
      dataset: table,
      flow: cdc,
      readViews: [],
    });
    expect(choice.engine).toBe("refused");
    expect("reason" in choice ? choice.reason : "").toContain(
      "its apply_as_deletes is written for DuckDB (a :: cast",
    );
  });
});
