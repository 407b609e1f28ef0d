import { readFile } from "node:fs/promises";
import { describe, expect, it } from "vitest";
import { DefinitionError } from "../../../shared/pipeline/errors.ts";
import { parseDefinition, parseDefinitionText } from "../../../shared/pipeline/parse-definition.ts";
import { SqlReferenceParser } from "../../../shared/pipeline/sql-references.ts";
import { validatePipeline } from "../../../shared/pipeline/validate-pipeline.ts";
import { advanceWatermark, lateSql } from "../../../shared/engine/stateful/watermark.ts";
import { operatorSignature, sameSignature } from "../../../shared/engine/stateful/operator-signature.ts";
import { tablePropertiesError } from "../../../shared/delta/index.ts";

const flow = (extra: Record<string, unknown>) => ({
  name: "p",
  catalog: "c",
  schema: "s",
  datasets: [
    {
      type: "streaming_table",
      name: "t",
      flows: [{ name: "f", source: { type: "stream", dataset: "u" }, sql: "SELECT * FROM source", ...extra }],
    },
  ],
});

describe("stateful flow settings", () => {
  it("the example pipeline parses", async () => {
    const text = await readFile(
      new URL("../../../examples/stateful/dedup-clicks.yaml", import.meta.url),
      "utf8",
    );
    const definition = parseDefinitionText(text);
    const [clicks] = definition.datasets;
    expect(clicks?.type === "streaming_table" && clicks.flows[0]?.drop_duplicates).toEqual({
      keys: ["click_id"],
      within_watermark: true,
    });
  });

  it("refuses a delay that is not a duration, and within_watermark without a watermark, saying what to write", () => {
    expect(() => parseDefinition(flow({ watermark: { column: "ts", delay: "soon" } }))).toThrow(
      /"soon" is not a delay: write a number and a unit/,
    );
    expect(() =>
      parseDefinition(flow({ drop_duplicates: { keys: ["id"], within_watermark: true } })),
    ).toThrow(DefinitionError);
    expect(() => parseDefinition(flow({ drop_duplicates: { keys: [] } }))).toThrow(/at least one key column/);
  });

  it("the watermark never moves back and trails the newest event by the delay", () => {
    expect(advanceWatermark(undefined, undefined, 1000)).toBeUndefined();
    expect(advanceWatermark(undefined, 5_000_000, 1000)).toBe(4_000_000);
    expect(advanceWatermark(4_000_000, 3_000_000, 1000)).toBe(4_000_000);
    expect(advanceWatermark(4_000_000, undefined, 1000)).toBe(4_000_000);
    expect(lateSql("ts", undefined)).toContain("IS NULL OR false");
  });

  it("a state is continued only by the same dedup keys and watermark column", () => {
    const of = (extra: Record<string, unknown>) => {
      const dataset = parseDefinition(flow(extra)).datasets[0]!;
      if (dataset.type !== "streaming_table") throw new Error("a streaming table");
      return operatorSignature(dataset.flows[0]!);
    };
    const base = of({ drop_duplicates: { keys: ["id"] } });
    expect(sameSignature(base, of({ drop_duplicates: { keys: ["id"] } }))).toBe(true);
    expect(sameSignature(base, of({ drop_duplicates: { keys: ["id", "v"] } }))).toBe(false);
    // Adding a watermark to plain deduplication keeps the seen keys valid; within_watermark does not.
    expect(
      sameSignature(
        base,
        of({ watermark: { column: "ts", delay: "1 minute" }, drop_duplicates: { keys: ["id"] } }),
      ),
    ).toBe(true);
    expect(
      sameSignature(
        base,
        of({
          watermark: { column: "ts", delay: "1 minute" },
          drop_duplicates: { keys: ["id"], within_watermark: true },
        }),
      ),
    ).toBe(false);
  });

  it("refuses a GROUP BY in a streaming flow at create, pointing at a materialized view; allows it in one", async () => {
    const parser = await SqlReferenceParser.open();
    try {
      const grouped = {
        name: "p",
        catalog: "c",
        schema: "s",
        datasets: [
          {
            type: "streaming_table",
            name: "raw",
            flows: [
              {
                name: "ingest",
                source: { type: "auto_loader", path: "/tmp/x", format: "json" },
                sql: "SELECT id, count(*) AS n FROM source GROUP BY id",
              },
            ],
          },
        ],
      };
      await expect(validatePipeline(grouped, parser, tablePropertiesError)).rejects.toThrow(
        /flow "ingest" aggregates over its stream without an event-time window.*materialized view/,
      );
      const view = {
        ...grouped,
        datasets: [
          {
            ...grouped.datasets[0]!,
            flows: [{ ...grouped.datasets[0]!.flows[0]!, sql: "SELECT id FROM source" }],
          },
          { type: "materialized_view", name: "counts", sql: "SELECT id, count(*) AS n FROM raw GROUP BY id" },
        ],
      };
      await expect(validatePipeline(view, parser, tablePropertiesError)).resolves.toBeDefined();
    } finally {
      parser.close();
    }
  });
});
