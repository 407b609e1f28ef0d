import { describe, expect, it } from "vitest";
import { parseDefinition, parseDefinitionText } from "../../../shared/pipeline/parse-definition.ts";
import { DefinitionError, type DefinitionIssue } from "../../../shared/pipeline/errors.ts";
import { SAMPLE_YAML, samplePipeline } from "./fixtures.ts";

function issuesOf(run: () => unknown): DefinitionIssue[] {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(DefinitionError);
    expect((error as DefinitionError).errorCode).toBe("INVALID_PARAMETER_VALUE");
    return [...(error as DefinitionError).issues];
  }
  throw new Error("expected a DefinitionError");
}

function withChange(change: (definition: ReturnType<typeof samplePipeline>) => void) {
  const definition = samplePipeline();
  change(definition);
  return definition;
}

describe("parseDefinition", () => {
  it("reads YAML, normalizing case-insensitive values and filling defaults", () => {
    const definition = parseDefinitionText(SAMPLE_YAML);
    expect(definition.configuration).toEqual({ "pipelines.rewind.betaEnabled": "true" });
    expect(definition.continuous).toBe(false);
    const [raw, orders] = definition.datasets;
    expect(raw).toMatchObject({ type: "streaming_table", reset_mode: "DROP" });
    expect(orders).toMatchObject({ reset_mode: "TRUNCATE", partition_by: ["day"] });
    if (raw?.type !== "streaming_table") throw new Error("unreachable");
    expect(raw.flows[0]?.source).toEqual({
      type: "auto_loader",
      path: "s3://landing-bucket/orders/",
      format: "json",
    });
    expect(raw.flows[0]?.options).toEqual({ max_files_per_batch: 100, bad_records: "quarantine" });
  });

  it("reads JSON text the same way", () => {
    const definition = parseDefinitionText(JSON.stringify(samplePipeline()));
    expect(definition.datasets.map((d) => d.name)).toEqual([
      "raw_orders",
      "customers",
      "orders",
      "daily_totals",
      "recent",
    ]);
  });

  it("accepts its own output unchanged (stored definitions are parsed again when read)", () => {
    for (const input of [samplePipeline(), parseDefinitionText(SAMPLE_YAML)]) {
      const once = parseDefinition(input);
      expect(parseDefinition(JSON.parse(JSON.stringify(once)))).toEqual(once);
    }
  });

  it("names the line of a syntax error", () => {
    const issues = issuesOf(() => parseDefinitionText("name: x\ndatasets: [\n  {name: a"));
    expect(issues[0]?.path).toMatch(/^line \d+, column \d+$/);
    expect(issues[0]?.message).toMatch(/^not valid YAML or JSON/);
  });

  it("refuses a key written twice instead of keeping the last", () => {
    const issues = issuesOf(() =>
      parseDefinitionText("name: a\nname: b\ncatalog: c\nschema: s\ndatasets: []"),
    );
    expect(issues[0]?.message).toMatch(/not valid YAML or JSON: .*unique/i);
  });

  it("refuses unknown fields, listing the allowed ones", () => {
    const issues = issuesOf(() =>
      parseDefinition(
        withChange((d) => {
          (d.datasets[0] as { flows: Record<string, unknown>[] }).flows[0]!["sq"] = "SELECT 1";
          d["owner"] = "me";
        }),
      ),
    );
    expect(issues).toEqual([
      {
        path: "datasets[0].flows[0]",
        message:
          'unknown field "sq"; allowed here: name, source, sql, owns, options, watermark, drop_duplicates, join, auto_cdc',
      },
      {
        path: "",
        message: expect.stringMatching(/^unknown field "owner"; allowed here: name, catalog, schema/),
      },
    ]);
  });

  it("refuses identifiers that could escape a storage prefix", () => {
    const issues = issuesOf(() =>
      parseDefinition(
        withChange((d) => {
          d["catalog"] = "Main";
          d["schema"] = "../x";
          d.datasets[0]!["name"] = "raw/orders";
          (d.datasets[0] as { flows: Record<string, unknown>[] }).flows[0]!["name"] = "1st";
        }),
      ),
    );
    expect(issues.map((i) => i.path)).toEqual([
      "catalog",
      "schema",
      "datasets[0].name",
      "datasets[0].flows[0].name",
    ]);
    expect(issues[0]?.message).toBe(
      'catalog "Main" is not allowed: use lower-case letters, digits and _ (not starting with a digit), at most 128 characters, e.g. "daily_orders"',
    );
  });

  it("says which field is missing and which values are allowed", () => {
    const issues = issuesOf(() =>
      parseDefinition(
        withChange((d) => {
          delete d["catalog"];
          d.datasets[0]!["type"] = "table";
          const flow = (d.datasets[2] as { flows: Record<string, unknown>[] }).flows[0]!;
          flow["source"] = { type: "pulsar", topic: "t" };
          d.datasets[1]!["flows"] = [];
        }),
      ),
    );
    expect(issues).toEqual([
      { path: "catalog", message: "is required (a string)" },
      {
        path: "datasets[0].type",
        message: 'must be one of "streaming_table", "materialized_view", "view", not "table"',
      },
      { path: "datasets[1].flows", message: "a streaming_table needs at least one flow" },
      {
        path: "datasets[2].flows[0].source.type",
        message: 'must be one of "stream", "delta", "auto_loader", "kafka", "kinesis", not "pulsar"',
      },
    ]);
  });

  it("checks sources: paths, formats and declared columns", () => {
    const issues = issuesOf(() =>
      parseDefinition(
        withChange((d) => {
          const flow = (i: number) => (d.datasets[i] as { flows: Record<string, unknown>[] }).flows[0]!;
          flow(0)["source"] = {
            type: "auto_loader",
            path: "landing/orders",
            format: "xml",
            schema: { "bad col": "INT" },
          };
          flow(1)["source"] = { type: "delta", path: "s3://bucket/a/../../other" };
        }),
      ),
    );
    expect(issues).toEqual([
      {
        path: "datasets[0].flows[0].source.path",
        message: expect.stringMatching(
          /^path "landing\/orders" is not a location Ebb can read: use s3:\/\/<bucket>/,
        ),
      },
      {
        path: "datasets[0].flows[0].source.format",
        message: 'must be one of "json", "csv", "parquet", not "xml"',
      },
      {
        path: 'datasets[0].flows[0].source.schema["bad col"]',
        message:
          'column name "bad col" is not allowed: use letters, digits and _ (not starting with a digit)',
      },
      {
        path: "datasets[1].flows[0].source.path",
        message: expect.stringMatching(/^path "s3:\/\/bucket\/a\/..\/..\/other" is not/),
      },
    ]);
  });

  it("checks flow options", () => {
    const issues = issuesOf(() =>
      parseDefinition(
        withChange((d) => {
          (d.datasets[2] as { flows: Record<string, unknown>[] }).flows[0]!["options"] = {
            max_files_per_batch: 0,
            max_rows_per_batch: 2.5,
            bad_records: "drop",
            starting_version: -1,
            starting_timestamp: "2026-02-30 10:00:00",
          };
        }),
      ),
    );
    const at = (field: string) =>
      issues.find((i) => i.path === `datasets[2].flows[0].options.${field}`)?.message;
    // Named by the flow and the option, as the flow's own rules name them.
    const flow = `flow "${(samplePipeline().datasets[2] as { flows: { name: string }[] }).flows[0]!.name}"`;
    expect(at("max_files_per_batch")).toBe(`${flow}: max_files_per_batch must be greater than 0`);
    expect(at("max_rows_per_batch")).toBe(`${flow}: max_rows_per_batch must be a whole number`);
    expect(at("bad_records")).toBe(`${flow}: bad_records must be one of "fail", "quarantine", not "drop"`);
    expect(at("starting_version")).toBe(`${flow}: starting_version must be 0 or more`);
    expect(at("starting_timestamp")).toMatch(/^"2026-02-30 10:00:00" is not a timestamp/);
  });

  it("accepts one starting option, for table sources only", () => {
    const definition = samplePipeline();
    const flow = (i: number) => (definition.datasets[i] as { flows: Record<string, unknown>[] }).flows[0]!;
    flow(0)["options"] = { starting_version: 3 };
    flow(1)["options"] = { starting_version: 3, starting_timestamp: "2026-01-31 00:00:00" };
    flow(2)["options"] = { starting_timestamp: "2026-01-31T00:00:00Z" };
    expect(issuesOf(() => parseDefinition(definition))).toEqual([
      {
        path: "datasets[0].flows[0].options.starting_version",
        message:
          "starting_version applies to stream and delta sources (table versions and commit times); an auto_loader source reads every file under its path",
      },
      {
        path: "datasets[1].flows[0].options.starting_timestamp",
        message: "set starting_version or starting_timestamp, not both",
      },
    ]);
  });

  it("accepts read_change_feed on table sources only", () => {
    const definition = samplePipeline();
    const flow = (i: number) => (definition.datasets[i] as { flows: Record<string, unknown>[] }).flows[0]!;
    flow(0)["options"] = { read_change_feed: true };
    flow(2)["options"] = { read_change_feed: true };
    expect(issuesOf(() => parseDefinition(definition))).toEqual([
      {
        path: "datasets[0].flows[0].options.read_change_feed",
        message:
          "read_change_feed applies to stream and delta sources (Delta tables' change data feeds); auto_loader sources have none",
      },
    ]);
  });

  it("accepts use_incremental_listing on auto_loader sources only, as Databricks spells its values", () => {
    const definition = samplePipeline();
    const flow = (i: number) => (definition.datasets[i] as { flows: Record<string, unknown>[] }).flows[0]!;
    flow(0)["options"] = { use_incremental_listing: "AUTO" };
    flow(2)["options"] = { use_incremental_listing: false };
    expect(issuesOf(() => parseDefinition(definition))).toEqual([
      {
        path: "datasets[2].flows[0].options.use_incremental_listing",
        message: expect.stringMatching(/^use_incremental_listing applies to auto_loader sources/),
      },
    ]);
    flow(2)["options"] = {};
    const parsed = parseDefinition(definition);
    expect((parsed.datasets[0] as { flows: { options?: unknown }[] }).flows[0]!.options).toMatchObject({
      use_incremental_listing: "auto",
    });
    flow(0)["options"] = { use_incremental_listing: "sometimes", bad_records: "maybe" };
    const name = (flow(0) as { name: string }).name;
    expect(issuesOf(() => parseDefinition(definition))).toEqual([
      {
        path: "datasets[0].flows[0].options.use_incremental_listing",
        message: `flow "${name}": use_incremental_listing must be "auto", "true" or "false" (Databricks' cloudFiles.useIncrementalListing; true and false may be booleans), not "sometimes"`,
      },
      {
        path: "datasets[0].flows[0].options.bad_records",
        message: `flow "${name}": bad_records must be one of "fail", "quarantine", not "maybe"`,
      },
    ]);
  });

  it("refuses TRUNCATE on a view, and table fields a view cannot have", () => {
    const issues = issuesOf(() =>
      parseDefinition(
        withChange((d) => {
          d.datasets[4]!["reset_mode"] = "truncate";
          d.datasets[4]!["partition_by"] = ["day"];
        }),
      ),
    );
    expect(issues).toEqual([
      {
        path: "datasets[4].reset_mode",
        message:
          "TRUNCATE does not apply to a view (a view stores no data): use DROP or leave reset_mode out",
      },
      {
        path: "datasets[4]",
        message: 'unknown field "partition_by"; allowed here: type, name, reset_mode, sql',
      },
    ]);
  });

  it("checks table fields and the display name", () => {
    const issues = issuesOf(() =>
      parseDefinition(
        withChange((d) => {
          d["name"] = "x".repeat(257);
          d.datasets[2]!["partition_by"] = ["day", "order date"];
          d.datasets[3]!["properties"] = { "": "x", "delta.appendOnly": true };
        }),
      ),
    );
    expect(issues).toEqual([
      { path: "name", message: "name must be at most 256 characters" },
      {
        path: "datasets[2].partition_by[1]",
        message:
          'column name "order date" is not allowed: use letters, digits and _ (not starting with a digit)',
      },
      { path: 'datasets[3].properties[""]', message: "must not be empty" },
      { path: 'datasets[3].properties["delta.appendOnly"]', message: "must be a string, not boolean true" },
    ]);
  });

  it("wants configuration values as strings", () => {
    const issues = issuesOf(() =>
      parseDefinitionText(
        "name: a\ncatalog: c\nschema: s\nconfiguration:\n  pipelines.rewind.enabled: true\ndatasets: []",
      ),
    );
    expect(issues).toEqual([
      {
        path: 'configuration["pipelines.rewind.enabled"]',
        message: 'configuration values are strings: quote it (e.g. "true")',
      },
      { path: "datasets", message: "a pipeline needs at least one dataset" },
    ]);
  });

  it("refuses empty SQL and a definition that is not a map", () => {
    expect(issuesOf(() => parseDefinition("just text"))).toEqual([
      { path: "", message: 'must be an object, not "just text"' },
    ]);
    const issues = issuesOf(() => parseDefinition(withChange((d) => (d.datasets[3]!["sql"] = "   "))));
    expect(issues).toEqual([{ path: "datasets[3].sql", message: "sql must not be empty" }]);
  });
});
