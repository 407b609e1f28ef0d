import { readFile } from "node:fs/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DefinitionError } from "../../../shared/pipeline/errors.ts";
import { SqlReferenceParser } from "../../../shared/pipeline/sql-references.ts";
import { validatePipeline, validatePipelineText } from "../../../shared/pipeline/validate-pipeline.ts";
import { tablePropertiesError } from "../../../shared/delta/index.ts";

let parser: SqlReferenceParser;
beforeAll(async () => {
  parser = await SqlReferenceParser.open();
});
afterAll(() => parser.close());

function pipeline(cdc: Record<string, unknown>, extra: { flows?: object[]; properties?: object } = {}) {
  return {
    name: "cdc",
    catalog: "main",
    schema: "cdc",
    datasets: [
      {
        name: "feed",
        type: "streaming_table",
        flows: [
          { name: "land", source: { type: "delta", path: "s3://bucket/feed/" }, sql: "SELECT * FROM source" },
        ],
      },
      {
        name: "users",
        type: "streaming_table",
        ...(extra.properties ? { properties: extra.properties } : {}),
        flows: [
          {
            name: "users_cdc",
            source: { type: "stream", dataset: "feed" },
            sql: "SELECT * FROM source",
            auto_cdc: cdc,
          },
          ...(extra.flows ?? []),
        ],
      },
    ],
  };
}

async function problems(definition: unknown): Promise<string[]> {
  try {
    await validatePipeline(definition, parser, tablePropertiesError);
  } catch (error) {
    if (error instanceof DefinitionError) return error.issues.map((i) => `${i.path}: ${i.message}`);
    throw error;
  }
  return [];
}

const base = { keys: ["userId"], sequence_by: "sequenceNum" };

describe("AUTO CDC flow definitions", () => {
  it("accepts Databricks' parameter names, with defaults", async () => {
    const validated = await validatePipeline(
      pipeline({
        ...base,
        apply_as_deletes: "operation = 'DELETE'",
        except_column_list: ["operation", "sequenceNum"],
        stored_as_scd_type: "2",
        track_history_except_column_list: ["city"],
      }),
      parser,
      tablePropertiesError,
    );
    const flow = (validated.definition.datasets[1] as { flows: { auto_cdc?: object }[] }).flows[0]!;
    expect(flow.auto_cdc).toMatchObject({ stored_as_scd_type: 2, ignore_null_updates: false });
    expect(await problems(pipeline({ ...base, sequence_by: ["ts", "lsn"] }))).toEqual([]);
  });

  it("refuses what cannot work, naming the field and the way out", async () => {
    expect(await problems(pipeline({ ...base, column_list: ["a"], except_column_list: ["b"] }))).toEqual([
      expect.stringContaining("set column_list or except_column_list, not both"),
      expect.stringContaining('column_list must include the key column "userId"'),
    ]);
    expect(await problems(pipeline({ ...base, track_history_column_list: ["city"] }))).toEqual([
      expect.stringContaining("applies to SCD type 2"),
    ]);
    expect(
      await problems(pipeline({ ...base, stored_as_scd_type: 2, apply_as_truncates: "op = 'T'" })),
    ).toEqual([expect.stringContaining("apply_as_truncates applies to SCD type 1 only")]);
    expect(await problems(pipeline({ ...base, stored_as_scd_type: 3 }))).toHaveLength(1);
    expect(await problems(pipeline({ ...base, keyz: ["x"] }))).toEqual([
      expect.stringContaining('unknown field "keyz"'),
    ]);
    expect(await problems(pipeline({ ...base, except_column_list: ["userId"] }))).toEqual([
      expect.stringContaining("always written to the target"),
    ]);
    expect(await problems(pipeline({ ...base, apply_as_deletes: "op = 'D'; DROP TABLE x" }))).toEqual([
      expect.stringContaining('apply_as_deletes of flow "users_cdc" is not a SQL condition'),
    ]);
  });

  it("keeps an AUTO CDC target to AUTO CDC flows, without owns", async () => {
    const second = {
      name: "append",
      source: { type: "stream", dataset: "feed" },
      sql: "SELECT * FROM source",
    };
    expect(await problems(pipeline(base, { flows: [second] }))).toEqual([
      expect.stringContaining('only AUTO CDC flows may write it ("append" do not)'),
    ]);
    const owned = pipeline(base);
    (owned.datasets[1]!.flows![0] as Record<string, unknown>)["owns"] = "region = 'eu'";
    expect(await problems(owned)).toEqual([
      expect.stringContaining("owns does not apply to an AUTO CDC flow"),
    ]);
  });

  it("accepts several AUTO CDC flows into one target that agree on keys, type and sequence", async () => {
    const backfill = {
      name: "backfill",
      source: { type: "delta", path: "s3://bucket/backfill/" },
      sql: "SELECT * FROM source",
      auto_cdc: { keys: ["userId"], sequence_by: ["sequenceNum"], except_column_list: ["operation"] },
    };
    expect(await problems(pipeline(base, { flows: [backfill] }))).toEqual([]);
  });

  it("refuses AUTO CDC flows into one target that order its rows differently, by name, with a code", async () => {
    const other = (cdc: Record<string, unknown>) => ({
      name: "backfill",
      source: { type: "delta", path: "s3://bucket/backfill/" },
      sql: "SELECT * FROM source",
      auto_cdc: cdc,
    });
    const refusal = async (cdc: Record<string, unknown>) => {
      try {
        await validatePipeline(pipeline(base, { flows: [other(cdc)] }), parser, tablePropertiesError);
      } catch (error) {
        if (error instanceof DefinitionError) return { code: error.errorCode, message: error.message };
        throw error;
      }
      return undefined;
    };
    const keys = await refusal({ ...base, keys: ["userId", "region"] });
    expect(keys?.code).toBe("AUTO_CDC_FLOWS_INCOMPATIBLE");
    expect(keys?.message).toContain('AUTO CDC flows "users_cdc" and "backfill" both write "users"');
    expect(keys?.message).toContain('keys ["region","userId"] (flow "users_cdc": ["userId"])');
    expect((await refusal({ ...base, stored_as_scd_type: 2 }))?.message).toContain(
      'stored_as_scd_type 2 (flow "users_cdc": 1)',
    );
    expect((await refusal({ ...base, sequence_by: "ts" }))?.message).toContain(
      'sequence_by ["ts"] (flow "users_cdc": ["sequenceNum"])',
    );
    expect((await refusal({ ...base, ignore_null_updates: true }))?.code).toBe("AUTO_CDC_FLOWS_INCOMPATIBLE");
  });

  it("checks the tombstone retention property", async () => {
    const bad = pipeline(base, { properties: { "pipelines.cdc.tombstoneGCThresholdInSeconds": "2 days" } });
    expect(await problems(bad)).toEqual([expect.stringContaining("is not a whole number of seconds")]);
  });
});

describe("the AUTO CDC example", () => {
  it("validates", async () => {
    const text = await readFile("examples/auto-cdc/users.yaml", "utf8");
    const validated = await validatePipelineText(
      text.replaceAll("${LANDING}", "/tmp/landing"),
      parser,
      tablePropertiesError,
    );
    expect(validated.graph.levels).toEqual([["users_current", "users_history"]]);
  });
});
