import { mkdir } from "node:fs/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestControlPlane, type TestControlPlane } from "../../support/control-plane.ts";

/**
 * Values as the API answers them, through the local runtime: a DECIMAL keeps every digit (DuckDB's
 * JS conversion goes through a double, which rounded 38-digit amounts), and a MAP is a JSON object,
 * as Databricks answers one, in table queries, the change feed, SQL statements and nested in structs.
 */
describe("decimal and map values in answers", () => {
  let cp: TestControlPlane;
  beforeAll(async () => {
    cp = await startTestControlPlane();
    await mkdir(`${cp.landing}/values`, { recursive: true });
    const { pipeline_id } = await cp.client.createPipeline({
      name: "values",
      catalog: "shop",
      schema: "values",
      definition: {
        datasets: [
          {
            type: "streaming_table",
            name: "ledger",
            properties: { "delta.enableChangeDataFeed": "true" },
            flows: [
              {
                name: "ingest",
                source: {
                  type: "auto_loader",
                  path: `${cp.landing}/values`,
                  format: "json",
                  schema: { id: "BIGINT", amount: "VARCHAR", attrs: "MAP(VARCHAR, BIGINT)" },
                },
                sql:
                  "SELECT id, CAST(amount AS DECIMAL(38, 6)) AS amount, CAST(id * 0.25 AS DECIMAL(10, 2)) AS small, " +
                  "attrs, struct_pack(total := CAST(amount AS DECIMAL(38, 6)), attrs := attrs) AS detail FROM source",
              },
            ],
          },
        ],
      },
    });
    await cp.land("values/001.json", [
      { id: 1, amount: "12345678901234567890123456789012.123456", attrs: { a: 1, b: 2 } },
      { id: 2, amount: "5", attrs: {} },
    ]);
    const { update_id } = await cp.client.startUpdate(pipeline_id);
    const update = await cp.client.waitForUpdate(pipeline_id, update_id, { intervalMs: 200 });
    expect(update.state, update.error?.message).toBe("COMPLETED");
  });
  afterAll(() => cp?.close());

  const LONG = "12345678901234567890123456789012.123456";

  it("a table query answers exact decimals (a number when it is exact, else its text) and maps as objects", async () => {
    const { rows } = await cp.client.query("shop.values.ledger", { sql: "SELECT * FROM t ORDER BY id" });
    expect(rows).toEqual([
      {
        id: 1,
        amount: LONG,
        small: 0.25,
        attrs: { a: 1, b: 2 },
        detail: { total: LONG, attrs: { a: 1, b: 2 } },
      },
      { id: 2, amount: 5, small: 0.5, attrs: {}, detail: { total: 5, attrs: {} } },
    ]);
  });

  it("the change feed answers the same values", async () => {
    const { changes } = await cp.client.changes("shop.values.ledger", { starting_version: 1 });
    expect(changes.map((c) => [c["amount"], c["attrs"]])).toEqual([
      [LONG, { a: 1, b: 2 }],
      [5, {}],
    ]);
  });

  it("a SQL statement answers each decimal's digits, as Databricks' JSON_ARRAY does", async () => {
    const answer = await cp.client.executeStatement({
      statement: "SELECT amount, small, attrs, detail FROM shop.values.ledger ORDER BY id",
    });
    expect(answer.status.state).toBe("SUCCEEDED");
    expect(answer.result?.data_array).toEqual([
      [LONG, "0.25", '{"a":1,"b":2}', `{"total":"${LONG}","attrs":{"a":1,"b":2}}`],
      ["5.000000", "0.50", "{}", '{"total":5,"attrs":{}}'],
    ]);
  });
});
