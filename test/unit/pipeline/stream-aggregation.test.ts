import { readFile } from "node:fs/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DefinitionError } from "../../../shared/pipeline/errors.ts";
import { parseDefinition } from "../../../shared/pipeline/parse-definition.ts";
import { SqlReferenceParser } from "../../../shared/pipeline/sql-references.ts";
import { quoteWindowKeyword } from "../../../shared/pipeline/sql-text/index.ts";
import { validatePipeline, validatePipelineText } from "../../../shared/pipeline/validate-pipeline.ts";
import { tablePropertiesError } from "../../../shared/delta/index.ts";

const pipeline = (sql: string, extra: Record<string, unknown> = {}) => ({
  name: "p",
  catalog: "c",
  schema: "s",
  datasets: [
    { type: "materialized_view", name: "dim", sql: "SELECT 1 AS k" },
    {
      type: "streaming_table",
      name: "t",
      flows: [
        {
          name: "f",
          source: { type: "auto_loader", path: "/tmp/x", format: "json" },
          sql,
          watermark: { column: "ts", delay: "5 minutes" },
          ...extra,
        },
      ],
    },
  ],
});

describe("aggregation over a stream", () => {
  let parser: SqlReferenceParser;
  beforeAll(async () => {
    parser = await SqlReferenceParser.open();
  });
  afterAll(() => parser.close());

  const refusal = async (sql: string, extra: Record<string, unknown> = {}) => {
    const error = await validatePipeline(pipeline(sql, extra), parser, tablePropertiesError).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(DefinitionError);
    return error as DefinitionError;
  };

  it("accepts a tumbling or sliding window over the watermark column, as Spark users write it", async () => {
    for (const sql of [
      "SELECT window.start AS start, window.end AS end, k, count(*) AS n, sum(v) AS s FROM source GROUP BY window(ts, '10 minutes'), k",
      "SELECT window, avg(v) AS a, min(v) AS lo, max(v) AS hi FROM source s WHERE v > 0 GROUP BY WINDOW(ts, '10 minutes', '5 minutes')",
      "SELECT window(ts, '1 hour') AS w, count(v) FILTER (WHERE v > 1) AS n FROM source GROUP BY window(ts, '1 hour')",
      "SELECT window, count(DISTINCT v) AS users, sum(DISTINCT v) AS s, avg(DISTINCT v) AS a, max(DISTINCT v) AS hi FROM source GROUP BY window(ts, '1 hour')",
    ])
      await expect(validatePipeline(pipeline(sql), parser, tablePropertiesError)).resolves.toBeDefined();
  });

  it("the example pipeline validates", async () => {
    const text = await readFile(
      new URL("../../../examples/stateful/window-metrics.yaml", import.meta.url),
      "utf8",
    );
    await expect(validatePipelineText(text, parser, tablePropertiesError)).resolves.toBeDefined();
  });

  it("refuses a GROUP BY without a window with its own code, also inside a subquery or CTE", async () => {
    for (const sql of [
      "SELECT k, count(*) AS n FROM source GROUP BY k",
      "SELECT count(*) AS n FROM source",
      "SELECT * FROM (SELECT k, count(*) AS n FROM source GROUP BY k) WHERE n > 1",
      "WITH s AS (SELECT * FROM source) SELECT k, count(*) FROM s GROUP BY k",
      "SELECT k FROM source WHERE k IN (SELECT k FROM source GROUP BY k HAVING count(*) > 1)",
    ]) {
      const error = await refusal(sql);
      expect(error.errorCode, sql).toBe("STREAMING_AGGREGATION_NOT_SUPPORTED");
      expect(error.message).toContain("materialized view");
    }
  });

  it("refuses SELECT DISTINCT over the stream, which would dedup each micro-batch alone, pointing at drop_duplicates", async () => {
    for (const sql of [
      "SELECT DISTINCT k FROM source",
      "SELECT DISTINCT ON (k) k, v FROM source",
      "SELECT * FROM (SELECT DISTINCT k, v FROM source) WHERE v > 1",
    ]) {
      const error = await refusal(sql);
      expect(error.errorCode, sql).toBe("STREAMING_AGGREGATION_NOT_SUPPORTED");
      expect(error.message, sql).toContain("drop_duplicates: {keys: [<columns>]}");
    }
    await expect(
      validatePipeline(
        pipeline("SELECT * FROM source WHERE k IN (SELECT DISTINCT k FROM dim)"),
        parser,
        tablePropertiesError,
      ),
    ).resolves.toBeDefined();
  });

  it("allows aggregates over static datasets in a stream's query", async () => {
    await expect(
      validatePipeline(
        pipeline("SELECT * FROM source WHERE k IN (SELECT max(k) FROM dim GROUP BY k)"),
        parser,
        tablePropertiesError,
      ),
    ).resolves.toBeDefined();
  });

  it("refuses what cannot be kept incrementally, saying what to use", async () => {
    expect(
      (await refusal("SELECT median(v) AS m FROM source GROUP BY window(ts, '1 hour')")).message,
    ).toMatch(/median\(\) needs every row of a window.*count, sum, min, max or avg/);
    for (const distinct of ["count(DISTINCT v, k)", "count(DISTINCT *)"])
      expect(
        (await refusal(`SELECT ${distinct} AS m FROM source GROUP BY window(ts, '1 hour')`)).message,
      ).toMatch(/DISTINCT …\) of several columns or \* is not supported/);
    expect((await refusal("SELECT v, count(*) FROM source GROUP BY window(ts, '1 hour')")).message).toMatch(
      /column v is neither grouped nor aggregated/,
    );
    expect((await refusal("SELECT count(*) FROM source GROUP BY window(ts, 'soon')")).message).toMatch(
      /needs durations/,
    );
  });

  it("a window needs a watermark on its column (WATERMARK_REQUIRED), as within_watermark does", async () => {
    const sql = "SELECT window, count(*) AS n FROM source GROUP BY window(ts, '1 hour')";
    const none = await refusal(sql, { watermark: undefined });
    expect(none.errorCode).toBe("WATERMARK_REQUIRED");
    expect(none.message).toContain('add watermark: {column: ts, delay: "10 minutes"}');
    const other = await refusal(sql, { watermark: { column: "other", delay: "1 minute" } });
    expect(other.message).toContain("its watermark is on other");
    const dedup = await refusal("SELECT * FROM source", {
      watermark: undefined,
      drop_duplicates: { keys: ["k"], within_watermark: true },
    });
    expect(dedup.errorCode).toBe("WATERMARK_REQUIRED");
    expect(() =>
      parseDefinition(
        pipeline("SELECT * FROM source", {
          watermark: undefined,
          drop_duplicates: { keys: ["k"], within_watermark: true },
        }),
      ),
    ).toThrow(expect.objectContaining({ errorCode: "WATERMARK_REQUIRED" }));
  });

  it("quotes Spark's window word, but not the WINDOW clause, literals or comments", () => {
    expect(
      quoteWindowKeyword("SELECT window.start, 'window(' FROM s GROUP BY window(ts, '1 hour') -- window("),
    ).toBe(`SELECT "window".start, 'window(' FROM s GROUP BY "window"(ts, '1 hour') -- window(`);
    expect(quoteWindowKeyword("SELECT sum(x) OVER w FROM s WINDOW w AS (ORDER BY ts)")).toBe(
      "SELECT sum(x) OVER w FROM s WINDOW w AS (ORDER BY ts)",
    );
  });
});
