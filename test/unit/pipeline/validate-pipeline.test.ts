import { readSettings } from "../../../shared/pipeline/pipeline-settings.ts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SqlReferenceParser } from "../../../shared/pipeline/sql-references.ts";
import { validatePipeline, validatePipelineText } from "../../../shared/pipeline/validate-pipeline.ts";
import { DefinitionError, type DefinitionIssue } from "../../../shared/pipeline/errors.ts";
import { SAMPLE_YAML, samplePipeline } from "./fixtures.ts";
import { tablePropertiesError } from "../../../shared/delta/index.ts";

let parser: SqlReferenceParser;
beforeAll(async () => {
  parser = await SqlReferenceParser.open();
});
afterAll(() => parser.close());

type Definition = ReturnType<typeof samplePipeline>;
type FlowRecord = Record<string, unknown>;

function flowOf(definition: Definition, dataset: number, flow = 0): FlowRecord {
  return (definition.datasets[dataset] as { flows: FlowRecord[] }).flows[flow] as FlowRecord;
}

async function issuesOf(change: (definition: Definition) => void): Promise<DefinitionIssue[]> {
  const definition = samplePipeline();
  change(definition);
  try {
    await validatePipeline(definition, parser, tablePropertiesError);
  } catch (error) {
    if (error instanceof DefinitionError) return [...error.issues];
    throw error;
  }
  throw new Error("expected a DefinitionError");
}

describe("validatePipeline", () => {
  it("refuses a dataset's table property that turns on a Delta feature Ebb does not write, by its code", async () => {
    const issues = await issuesOf((definition) => {
      (definition.datasets[1] as { properties?: Record<string, string> }).properties = {
        "delta.enableDeletionVectors": "true",
      };
    });
    expect(issues).toEqual([
      {
        path: "datasets[1].properties",
        message: expect.stringMatching(
          /delta\.enableDeletionVectors="true" needs the Delta feature deletionVectors/,
        ),
        code: "UNSUPPORTED_TABLE_PROPERTY",
      },
    ]);
    const invalid = await issuesOf((definition) => {
      (definition.datasets[1] as { properties?: Record<string, string> }).properties = {
        "delta.checkpointInterval": "often",
      };
    });
    expect(invalid).toEqual([expect.objectContaining({ code: "INVALID_TABLE_PROPERTY" })]);
  });

  it("accepts the sample and derives its DAG from sources and SQL", async () => {
    const pipeline = await validatePipeline(samplePipeline(), parser, tablePropertiesError);
    expect(pipeline.settings.rewindEnabled).toBe(true);
    expect(pipeline.graph.levels).toEqual([
      ["raw_orders", "customers"],
      ["orders"],
      ["daily_totals"],
      ["recent"],
    ]);
    expect(pipeline.graph.edges).toEqual([
      { from: "raw_orders", to: "orders", kind: "stream", flow: "clean_orders" },
      { from: "customers", to: "orders", kind: "read", flow: "clean_orders" },
      { from: "orders", to: "daily_totals", kind: "read" },
      { from: "daily_totals", to: "recent", kind: "read" },
    ]);
  });

  it("accepts YAML text with the betaEnabled alias", async () => {
    const pipeline = await validatePipelineText(SAMPLE_YAML, parser, tablePropertiesError);
    expect(pipeline.settings.rewindEnabled).toBe(true);
    expect(pipeline.graph.levels).toEqual([["raw_orders"], ["orders"]]);
  });

  it("refuses two datasets or two flows with one name", async () => {
    const issues = await issuesOf((d) => {
      d.datasets[1]!["name"] = "raw_orders";
      flowOf(d, 2)["name"] = "ingest_orders";
    });
    expect(issues).toContainEqual({
      path: "datasets[1].name",
      message:
        'two datasets are named "raw_orders" (datasets[0] and datasets[1]): dataset names must be unique',
    });
    expect(issues).toContainEqual({
      path: "datasets[2].flows[0].name",
      message:
        'two flows are named "ingest_orders" (datasets[0].flows[0].name and datasets[2].flows[0].name): flow names must be unique in the pipeline',
    });
  });

  it("refuses a flow named like another dataset, and a dataset named source", async () => {
    const issues = await issuesOf((d) => {
      flowOf(d, 2)["name"] = "customers";
      d.datasets[4]!["name"] = "source";
    });
    expect(issues.map((i) => i.path)).toEqual(["datasets[4].name", "datasets[2].flows[0].name"]);
    expect(issues[1]?.message).toBe(
      'flow "customers" of dataset "orders" has the name of another dataset: a flow may share its name only with the dataset it writes',
    );
  });

  it("allows a flow to share its name with the dataset it writes", async () => {
    const definition = samplePipeline();
    flowOf(definition, 2)["name"] = "orders";
    await expect(validatePipeline(definition, parser, tablePropertiesError)).resolves.toBeDefined();
  });

  it("refuses references to tables that are not datasets of the pipeline", async () => {
    const issues = await issuesOf((d) => {
      flowOf(d, 2)["sql"] =
        "SELECT * FROM source JOIN other.sales.customers USING (id) JOIN missing USING (id)";
      d.datasets[3]!["sql"] = "SELECT * FROM source";
    });
    expect(issues).toEqual([
      {
        path: "datasets[2].flows[0].sql",
        message:
          'flow "clean_orders" reads "other.sales.customers", which is not a dataset of this pipeline; a flow\'s SQL reads "source" (its micro-batch) and this pipeline\'s datasets (raw_orders, customers, orders, daily_totals, recent)',
      },
      {
        path: "datasets[2].flows[0].sql",
        message: expect.stringMatching(/^flow "clean_orders" reads "missing", which is not/),
      },
      {
        path: "datasets[3].sql",
        message:
          'dataset "daily_totals" reads "source", which is not a dataset of this pipeline; "source" is the micro-batch only in a flow\'s SQL',
      },
    ]);
  });

  it("refuses streaming from an unknown dataset, a materialized view or a view", async () => {
    const issues = await issuesOf((d) => {
      flowOf(d, 0)["source"] = { type: "stream", dataset: "nowhere" };
      flowOf(d, 1)["source"] = { type: "stream", dataset: "daily_totals" };
      flowOf(d, 2)["source"] = { type: "stream", dataset: "recent" };
    });
    expect(issues.map((i) => i.path)).toEqual([
      "datasets[0].flows[0].source.dataset",
      "datasets[1].flows[0].source.dataset",
      "datasets[2].flows[0].source.dataset",
    ]);
    expect(issues[0]?.message).toMatch(
      /^flow "ingest_orders" streams from "nowhere", which is not a dataset of this pipeline/,
    );
    expect(issues[1]?.message).toMatch(/a materialized_view: only a streaming_table can be read as a stream/);
    expect(issues[2]?.message).toMatch(
      /a view: only a streaming_table can be read as a stream \(a view stores nothing\)/,
    );
  });

  it("reports SQL that does not parse or is not a query, naming its owner", async () => {
    const issues = await issuesOf((d) => {
      flowOf(d, 0)["sql"] = "SELECT * FORM source";
      d.datasets[3]!["sql"] = "DELETE FROM orders";
    });
    expect(issues).toEqual([
      {
        path: "datasets[0].flows[0].sql",
        message: expect.stringMatching(/^SQL of flow "ingest_orders" .*syntax error/),
      },
      {
        path: "datasets[3].sql",
        message: 'SQL of dataset "daily_totals" must be a single SELECT statement (a query), not DDL or DML',
      },
    ]);
  });

  it("checks owns predicates", async () => {
    const issues = await issuesOf((d) => {
      flowOf(d, 0)["owns"] = "region = 'eu' AND";
      flowOf(d, 1)["owns"] = "id IN (SELECT id FROM orders)";
    });
    expect(issues).toEqual([
      {
        path: "datasets[0].flows[0].owns",
        message: expect.stringMatching(
          /^owns of flow "ingest_orders" is not a SQL condition on the table's own columns/,
        ),
      },
      {
        path: "datasets[1].flows[0].owns",
        message: expect.stringContaining("must not contain a subquery"),
      },
    ]);
  });

  it.each([
    "true) OR (SELECT count(*) FROM read_text('/etc/passwd')) > 0 OR (true",
    "true) FROM t WHERE (true",
    "true) UNION SELECT (1",
    "true), (1",
    "true)) AS x; COPY (SELECT 1) TO '/tmp/x'; SELECT ((1",
    "length(content) > 0 FROM read_text('/etc/passwd') --",
    "EXISTS (SELECT 1 FROM read_text('/etc/passwd'))",
  ])("refuses an owns predicate that is more than one condition: %s", async (owns) => {
    const issues = await issuesOf((d) => {
      flowOf(d, 0)["owns"] = owns;
    });
    expect(issues).toEqual([
      { path: "datasets[0].flows[0].owns", message: expect.stringContaining("owns of flow") },
    ]);
  });

  it("refuses a cycle, naming its datasets", async () => {
    const issues = await issuesOf((d) => {
      flowOf(d, 1)["sql"] = "SELECT * FROM source WHERE id NOT IN (SELECT id FROM daily_totals)";
    });
    expect(issues).toEqual([
      {
        path: "datasets",
        message:
          'datasets "customers", "orders", "daily_totals" read each other in a cycle (customers → orders → daily_totals → customers): a pipeline must be a DAG; remove one of the reads',
      },
    ]);
  });

  it("refuses a flow that reads its own table", async () => {
    const issues = await issuesOf((d) => {
      flowOf(d, 2)["sql"] = "SELECT * FROM source WHERE id NOT IN (SELECT id FROM orders)";
    });
    expect(issues[0]?.message).toMatch(/^datasets "orders" read each other in a cycle \(orders → orders\)/);
  });

  it("reports configuration values it cannot read", async () => {
    const issues = await issuesOf((d) => {
      d["configuration"] = {
        "pipelines.rewind.enabled": "yes",
        "pipelines.rewind.retention": "a week",
      };
    });
    expect(issues).toEqual([
      { path: 'configuration["pipelines.rewind.enabled"]', message: 'must be "true" or "false", not "yes"' },
      {
        path: 'configuration["pipelines.rewind.retention"]',
        message: expect.stringMatching(/^must be a duration such as "7 days"/),
      },
    ]);
  });

  it("refuses a key Ebb does not know under its own pipelines.rewind.* and pipelines.engine.*, not Databricks' other pipelines.* keys", () => {
    const result = readSettings({
      "pipelines.rewind.enabeld": "true",
      "pipelines.engine.autoThreshold": "1GB",
      "pipelines.trigger.interval": "1 hour",
      "pipelines.channel": "PREVIEW",
    });
    expect(result.ok ? [] : result.issues).toEqual([
      {
        path: 'configuration["pipelines.rewind.enabeld"]',
        message:
          "is not a setting Ebb knows: the pipelines.rewind.* settings are pipelines.rewind.betaEnabled, pipelines.rewind.enabled, pipelines.rewind.retention, pipelines.rewind.retentionDuration",
      },
      {
        path: 'configuration["pipelines.engine.autoThreshold"]',
        message:
          "is not a setting Ebb knows: the pipelines.engine.* settings are pipelines.engine.autoThresholdBytes, pipelines.engine.autoThresholdRecords",
      },
    ]);
  });

  it("reads Databricks' cloudFiles.useIncrementalListing as the auto_loader flows' listing, in any case", () => {
    const listing = (value: string) => {
      const result = readSettings({ "cloudFiles.useIncrementalListing": value });
      return result.ok ? result.settings.incrementalListing : result.issues;
    };
    const none = readSettings({});
    expect(none.ok && none.settings).not.toHaveProperty("incrementalListing");
    expect(listing("TRUE")).toBe("true");
    expect(listing("auto")).toBe("auto");
    expect(listing("sometimes")).toEqual([
      {
        path: 'configuration["cloudFiles.useIncrementalListing"]',
        message:
          'must be "auto", "true" or "false" (how auto_loader flows list their path; a flow\'s use_incremental_listing overrides it), not "sometimes"',
      },
    ]);
  });

  it("reads the rewind retention from pipelines.rewind.retention or its alias, not both at odds", () => {
    const days = (configuration: Record<string, string>) => {
      const result = readSettings(configuration);
      return result.ok ? result.settings.rewindRetentionMs / 86_400_000 : result.issues.map((i) => i.path);
    };
    expect(days({})).toBe(7);
    expect(days({ "pipelines.rewind.retention": "3 days" })).toBe(3);
    expect(days({ "pipelines.rewind.retentionDuration": "interval 2 days" })).toBe(2);
    expect(
      days({ "pipelines.rewind.retention": "3 days", "pipelines.rewind.retentionDuration": "2 days" }),
    ).toEqual(['configuration["pipelines.rewind.retentionDuration"]']);
  });
});
