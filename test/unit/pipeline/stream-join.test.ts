import { readFile } from "node:fs/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SqlReferenceParser } from "../../../shared/pipeline/sql-references.ts";
import { streamJoinOf } from "../../../shared/pipeline/stream-join.ts";
import { validatePipelineText } from "../../../shared/pipeline/validate-pipeline.ts";
import { tablePropertiesError } from "../../../shared/delta/index.ts";

/**
 * The event-time range of a stream-stream join, read from DuckDB's parse tree: every way Spark and
 * Databricks users write it gives the same bounds on `source.t - joined.t`, and a condition without
 * both bounds, or a join of another shape, is refused with what to write.
 */

const MINUTE = 60_000_000;
const sides = { stream: "impressions", leftTime: "click_time", rightTime: "impression_time" };

describe("stream-stream join conditions", () => {
  let parser: SqlReferenceParser;
  beforeAll(async () => {
    parser = await SqlReferenceParser.open();
  });
  afterAll(() => parser.close());

  const analyze = async (sql: string) => {
    const analysis = await parser.analyze(sql);
    if (!analysis.ok) throw new Error(analysis.message);
    return streamJoinOf(analysis.statement, sides);
  };

  it("reads the range however it is written", async () => {
    const cases: [string, number, number][] = [
      ["c.click_time BETWEEN i.impression_time AND i.impression_time + INTERVAL 1 HOUR", 0, 60],
      [
        "c.click_time >= i.impression_time - INTERVAL '10 minutes' AND c.click_time <= i.impression_time + INTERVAL 20 MINUTE",
        -10,
        20,
      ],
      // The joined time first, and the interval before the column.
      ["i.impression_time <= c.click_time AND INTERVAL 5 MINUTES + i.impression_time > c.click_time", 0, 5],
      ["i.impression_time BETWEEN c.click_time - INTERVAL 2 HOURS AND c.click_time", 0, 120],
      ["c.click_time = i.impression_time", 0, 0],
    ];
    for (const [condition, lo, hi] of cases) {
      const join = await analyze(`SELECT * FROM source c JOIN impressions i ON c.ad = i.ad AND ${condition}`);
      expect(join, condition).toMatchObject({
        kind: "join",
        type: "inner",
        leftAlias: "c",
        rightAlias: "i",
        range: { loMicros: lo * MINUTE, hiMicros: hi * MINUTE },
      });
    }
    const unaliased = await analyze(
      "SELECT * FROM source LEFT OUTER JOIN impressions ON source.ad = impressions.ad AND click_time BETWEEN impression_time AND impression_time + INTERVAL 1 HOUR",
    );
    expect(unaliased).toMatchObject({
      kind: "join",
      type: "left",
      leftAlias: "source",
      rightAlias: "impressions",
    });
  });

  it("refuses a condition without both bounds, saying what to write", async () => {
    for (const condition of [
      "c.ad = i.ad",
      "c.click_time >= i.impression_time",
      "c.click_time BETWEEN i.impression_time + INTERVAL 1 HOUR AND i.impression_time",
      "c.click_time > now() - INTERVAL 1 HOUR",
    ]) {
      const join = await analyze(`SELECT * FROM source c JOIN impressions i ON ${condition}`);
      expect(join, condition).toMatchObject({ kind: "refused", reason: "time-bound" });
      expect(join.kind === "refused" && join.message, condition).toMatch(
        /bound the event times against each other.*BETWEEN impressions\.impression_time - INTERVAL 10 MINUTES/,
      );
    }
  });

  it("refuses other shapes: right or full outer, the stream on the left, a join in a subquery, an aggregate", async () => {
    const range = "c.click_time BETWEEN i.impression_time AND i.impression_time + INTERVAL 1 HOUR";
    for (const sql of [
      `SELECT * FROM source c RIGHT JOIN impressions i ON ${range}`,
      `SELECT * FROM source c FULL OUTER JOIN impressions i ON ${range}`,
      `SELECT * FROM impressions i JOIN source c ON ${range}`,
      `SELECT * FROM (SELECT * FROM source c JOIN impressions i ON ${range})`,
      `SELECT c.ad, count(*) FROM source c JOIN impressions i ON ${range} GROUP BY c.ad`,
      "SELECT * FROM source",
    ]) {
      expect(await analyze(sql), sql).toMatchObject({ kind: "refused", reason: "shape" });
    }
  });

  it("the example pipeline validates", async () => {
    const text = await readFile(
      new URL("../../../examples/stateful/click-attribution.yaml", import.meta.url),
      "utf8",
    );
    await expect(validatePipelineText(text, parser, tablePropertiesError)).resolves.toBeDefined();
  });
});
