import { describe, expect, it } from "vitest";
import { RewindHarness } from "../../support/rewind/rewind-harness.ts";

/** Databricks' AUTO CDC walk-through (`users`), through the production steps on memory stores. */

const users = [
  { userId: 124, name: "Raul", city: "Oaxaca", operation: "INSERT", sequenceNum: 1 },
  { userId: 123, name: "Isabel", city: "Monterrey", operation: "INSERT", sequenceNum: 1 },
  { userId: 125, name: "Mercedes", city: "Tijuana", operation: "INSERT", sequenceNum: 2 },
  { userId: 126, name: "Lily", city: "Cancun", operation: "INSERT", sequenceNum: 2 },
  { userId: 123, name: null, city: null, operation: "DELETE", sequenceNum: 6 },
  { userId: 125, name: "Mercedes", city: "Guadalajara", operation: "UPDATE", sequenceNum: 6 },
  { userId: 125, name: "Mercedes", city: "Mexicali", operation: "UPDATE", sequenceNum: 5 },
  { userId: 123, name: "Isabel", city: "Chihuahua", operation: "UPDATE", sequenceNum: 5 },
];

function definition(landingUri: string, scd: 1 | 2) {
  return {
    name: "users",
    catalog: "main",
    schema: "cdc",
    configuration: { "pipelines.rewind.enabled": "true" },
    datasets: [
      {
        name: "target",
        type: "streaming_table",
        flows: [
          {
            name: "users_cdc",
            source: {
              type: "auto_loader",
              path: landingUri,
              format: "json",
              schema: {
                userId: "BIGINT",
                name: "VARCHAR",
                city: "VARCHAR",
                operation: "VARCHAR",
                sequenceNum: "BIGINT",
              },
            },
            sql: "SELECT * FROM source",
            auto_cdc: {
              keys: ["userId"],
              sequence_by: "sequenceNum",
              apply_as_deletes: "operation = 'DELETE'",
              ...(scd === 1 ? { apply_as_truncates: "operation = 'TRUNCATE'" } : {}),
              except_column_list: ["operation", "sequenceNum"],
              stored_as_scd_type: scd,
            },
          },
        ],
      },
    ],
  };
}

const lines = (rows: readonly object[]) => rows.map((r) => JSON.stringify(r)).join("\n") + "\n";

describe("AUTO CDC (Databricks' users example)", () => {
  it("SCD type 1: the latest row per key, deletes applied, late updates ignored", async () => {
    const h = new RewindHarness();
    await h.deploy(definition(h.landingUri, 1));
    await h.land("a.json", lines(users));
    await h.run();
    expect(await h.rows("target", "userId")).toEqual([
      { userId: 124n, name: "Raul", city: "Oaxaca" },
      { userId: 125n, name: "Mercedes", city: "Guadalajara" },
      { userId: 126n, name: "Lily", city: "Cancun" },
    ]);
  });

  it("SCD type 2: every version with __START_AT and __END_AT", async () => {
    const h = new RewindHarness();
    await h.deploy(definition(h.landingUri, 2));
    await h.land("a.json", lines(users));
    await h.run();
    const rows = (await h.rows("target", "userId")).sort(
      (a, b) =>
        Number(a["userId"]) - Number(b["userId"]) || Number(a["__START_AT"]) - Number(b["__START_AT"]),
    );
    expect(rows).toEqual([
      { userId: 123n, name: "Isabel", city: "Monterrey", __START_AT: 1n, __END_AT: 5n },
      { userId: 123n, name: "Isabel", city: "Chihuahua", __START_AT: 5n, __END_AT: 6n },
      { userId: 124n, name: "Raul", city: "Oaxaca", __START_AT: 1n, __END_AT: null },
      { userId: 125n, name: "Mercedes", city: "Tijuana", __START_AT: 2n, __END_AT: 5n },
      { userId: 125n, name: "Mercedes", city: "Mexicali", __START_AT: 5n, __END_AT: 6n },
      { userId: 125n, name: "Mercedes", city: "Guadalajara", __START_AT: 6n, __END_AT: null },
      { userId: 126n, name: "Lily", city: "Cancun", __START_AT: 2n, __END_AT: null },
    ]);
  });

  it("SCD type 1 truncate: removes every row sequenced at or below it, in one batch or across batches", async () => {
    const truncate = { userId: null, name: null, city: null, operation: "TRUNCATE", sequenceNum: 3 };
    const expected = [{ userId: 125n, name: "Mercedes", city: "Guadalajara" }];
    const together = new RewindHarness();
    await together.deploy(definition(together.landingUri, 1));
    await together.land("a.json", lines([...users, truncate]));
    await together.run();
    expect(await together.rows("target", "userId")).toEqual(expected);

    const apart = new RewindHarness();
    await apart.deploy(definition(apart.landingUri, 1));
    await apart.land("a.json", lines(users.slice(0, 6)));
    await apart.run();
    await apart.land("b.json", lines([truncate, ...users.slice(6)]));
    await apart.run();
    expect(await apart.rows("target", "userId")).toEqual(expected);
  });

  it("rewinds with its per-key state: replay after a rewind needs no refresh", async () => {
    const h = new RewindHarness();
    await h.deploy(definition(h.landingUri, 1));
    await h.land("a.json", lines(users.slice(0, 4)));
    await h.run();
    const [point] = await h.eventsOf("rewind_summary");
    await h.land("b.json", lines(users.slice(4)));
    await h.run();
    await h.rewind({ rewind_point_id: point!.id });
    expect((await h.rows("target", "userId")).map((r) => r["userId"])).toEqual([123n, 124n, 125n, 126n]);
    await h.run();
    expect(await h.rows("target", "userId")).toEqual([
      { userId: 124n, name: "Raul", city: "Oaxaca" },
      { userId: 125n, name: "Mercedes", city: "Guadalajara" },
      { userId: 126n, name: "Lily", city: "Cancun" },
    ]);
  });
});
