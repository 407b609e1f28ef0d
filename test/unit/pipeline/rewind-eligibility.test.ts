import { describe, expect, it } from "vitest";
import { parseDefinition } from "../../../shared/pipeline/parse-definition.ts";
import { rewindIssues } from "../../../shared/pipeline/rewind-eligibility.ts";
import {
  DEFAULT_REWIND_RETENTION_MS,
  readSettings,
  type PipelineSettings,
} from "../../../shared/pipeline/pipeline-settings.ts";
import { samplePipeline } from "./fixtures.ts";

const enabled: PipelineSettings = {
  rewindEnabled: true,
  rewindRetentionMs: DEFAULT_REWIND_RETENTION_MS,
  allowUpdateAfterIncompleteRewind: false,
  sqlDialect: "duckdb",
};

function withProperties(dataset: number, properties: Record<string, string>) {
  const definition = samplePipeline();
  definition.datasets[dataset]!["properties"] = properties;
  return parseDefinition(definition);
}

describe("rewindIssues", () => {
  it("accepts every source type: stream, delta and auto_loader are all rewindable", () => {
    expect(rewindIssues(parseDefinition(samplePipeline()), enabled)).toEqual([]);
  });

  it("rejects every flow writing an append-only table, naming it and why", () => {
    const definition = samplePipeline();
    const orders = definition.datasets[2] as { flows: Record<string, unknown>[]; properties?: unknown };
    orders.flows.push({
      name: "late_orders",
      source: { type: "stream", dataset: "raw_orders" },
      sql: "SELECT * FROM source",
    });
    orders.properties = { "delta.appendOnly": "TRUE" };
    const issues = rewindIssues(parseDefinition(definition), enabled);
    expect(issues).toEqual([
      {
        path: 'datasets[2].properties["delta.appendOnly"]',
        message:
          'flow "clean_orders" (writes "orders") cannot be rewound while rewind is enabled: the table is append-only, and a rewind restores it with a commit that removes files; remove delta.appendOnly or turn rewind off',
      },
      {
        path: 'datasets[2].properties["delta.appendOnly"]',
        message: expect.stringMatching(/^flow "late_orders" \(writes "orders"\) cannot be rewound/),
      },
    ]);
  });

  it("rejects a table keeping history for less time than rewind points live", () => {
    const issues = rewindIssues(
      withProperties(3, {
        "delta.logRetentionDuration": "interval 2 days",
        "delta.deletedFileRetentionDuration": "interval 1 week",
      }),
      enabled,
    );
    expect(issues).toEqual([
      {
        path: 'datasets[3].properties["delta.logRetentionDuration"]',
        message:
          'materialized view "daily_totals" cannot be rewound while rewind is enabled: the table keeps history for 2 days, less than the 1 week rewind points live; raise it to at least that, or shorten pipelines.rewind.retention',
      },
    ]);
  });

  it("follows the pipeline's own rewind retention", () => {
    const definition = withProperties(3, { "delta.logRetentionDuration": "interval 2 days" });
    expect(rewindIssues(definition, { ...enabled, rewindRetentionMs: 86_400_000 })).toEqual([]);
  });

  it("reports retention properties it cannot read", () => {
    const issues = rewindIssues(
      withProperties(0, { "delta.deletedFileRetentionDuration": "forever" }),
      enabled,
    );
    expect(issues[0]?.message).toMatch(/"forever" is not a duration such as "interval 30 days"$/);
  });

  it("checks nothing while rewind is off", () => {
    const definition = withProperties(0, { "delta.appendOnly": "true" });
    expect(rewindIssues(definition, { ...enabled, rewindEnabled: false })).toEqual([]);
  });
});

describe("readSettings", () => {
  it("defaults to rewind off and 7 days of retention", () => {
    expect(readSettings({})).toEqual({
      ok: true,
      settings: {
        rewindEnabled: false,
        rewindRetentionMs: 7 * 86_400_000,
        allowUpdateAfterIncompleteRewind: false,
        sqlDialect: "duckdb",
        engine: { kind: "fixed", engine: "duckdb" },
      },
    });
  });

  it("accepts the alias, any letter case, and a retention interval", () => {
    const result = readSettings({
      "pipelines.rewind.betaEnabled": "True",
      "pipelines.rewind.retention": "interval 36 hours",
      "pipelines.allowUpdateAfterIncompleteRewind": "TRUE",
    });
    expect(result).toEqual({
      ok: true,
      settings: {
        rewindEnabled: true,
        rewindRetentionMs: 36 * 3_600_000,
        allowUpdateAfterIncompleteRewind: true,
        sqlDialect: "duckdb",
        engine: { kind: "fixed", engine: "duckdb" },
      },
    });
  });

  it("refuses the switch and its alias saying different things", () => {
    const result = readSettings({
      "pipelines.rewind.enabled": "true",
      "pipelines.rewind.betaEnabled": "false",
    });
    expect(result).toEqual({
      ok: false,
      issues: [
        {
          path: 'configuration["pipelines.rewind.betaEnabled"]',
          message:
            "contradicts pipelines.rewind.enabled: set only one of the two (pipelines.rewind.betaEnabled is an alias)",
        },
      ],
    });
  });
});
