import { describe, expect, it } from "vitest";
import { windowStateRows } from "../../../shared/engine/stateful/window-state-rows.ts";
import { groupColumn, partialColumn, WINDOW_START } from "../../../shared/pipeline/plan/index.ts";

/** A fake renderer: each test tree is `{sql}`, its SQL text. */
const render = async (node: unknown) => (node as { sql: string }).sql;
const tree = (sql: string) => JSON.stringify({ sql });

const signature = JSON.stringify({
  window: { column: "ts", sizeMicros: 600_000_000, slideMicros: 600_000_000 },
  keys: [tree("lower(k)")],
  aggregates: [
    { kind: "count", text: tree("count_star()") },
    { kind: "avg", text: tree("avg(v)") },
    { kind: "count", text: tree("count_star()") },
  ],
});
const schema = {
  key: [
    { name: WINDOW_START, type: "TIMESTAMP" },
    { name: groupColumn(0), type: "VARCHAR" },
  ],
  value: [
    { name: partialColumn(0, "count"), type: "BIGINT" },
    { name: partialColumn(1, "sum"), type: "BIGINT" },
    { name: partialColumn(1, "count"), type: "BIGINT" },
    { name: partialColumn(2, "count"), type: "BIGINT" },
  ],
};

describe("a windowed aggregation's state rows under the flow's names", () => {
  it("names the window, the grouping keys and each aggregate's partials as the SQL wrote them", async () => {
    const named = (await windowStateRows(signature, schema, render))!;
    expect(named.keyColumns).toEqual([
      { name: "window", type: "STRUCT(start TIMESTAMP, end TIMESTAMP)" },
      { name: "lower(k)", type: "VARCHAR" },
    ]);
    expect(named.valueColumns).toEqual([
      { name: "count(*)", type: "BIGINT" },
      { name: "avg(v)", type: "STRUCT(sum BIGINT, count BIGINT)" },
      { name: "count(*) #2", type: "BIGINT" },
    ]);
    const row = {
      [WINDOW_START]: "2026-01-01T12:00:00.000Z",
      [groupColumn(0)]: "a",
      [partialColumn(0, "count")]: 3,
      [partialColumn(1, "sum")]: 12,
      [partialColumn(1, "count")]: 3,
      [partialColumn(2, "count")]: 3,
    };
    expect(named.key(row)).toEqual({
      window: { start: "2026-01-01T12:00:00.000Z", end: "2026-01-01T12:10:00.000Z" },
      "lower(k)": "a",
    });
    expect(named.value(row)).toEqual({ "count(*)": 3, "avg(v)": { sum: 12, count: 3 }, "count(*) #2": 3 });
  });

  it("leaves the stored names to a version without a readable signature", async () => {
    for (const meta of [
      undefined,
      "not json",
      JSON.stringify({ window: {} }),
      JSON.stringify({ ...JSON.parse(signature), keys: ["{"] }),
    ])
      expect(await windowStateRows(meta, schema, render)).toBeUndefined();
  });
});
