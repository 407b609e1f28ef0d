import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestControlPlane, type TestControlPlane } from "../../support/control-plane.ts";

/**
 * Databricks' AUTO CDC walk-through (the `users` change feed, as SCD type 1 and type 2 targets)
 * through HTTP on the local runtime: two batches with out-of-order updates and a delete, a rewind to
 * the point between them and a replay with no refresh, then a truncate (type 1), and the targets'
 * change data feeds.
 */

const INSERTS = [
  { userId: 124, name: "Raul", city: "Oaxaca", operation: "INSERT", sequenceNum: 1 },
  { userId: 123, name: "Isabel", city: "Monterrey", operation: "INSERT", sequenceNum: 1 },
  { userId: 125, name: "Mercedes", city: "Tijuana", operation: "INSERT", sequenceNum: 2 },
  { userId: 126, name: "Lily", city: "Cancun", operation: "INSERT", sequenceNum: 2 },
];
const CHANGES = [
  { userId: 123, name: null, city: null, operation: "DELETE", sequenceNum: 6 },
  { userId: 125, name: "Mercedes", city: "Guadalajara", operation: "UPDATE", sequenceNum: 6 },
  { userId: 125, name: "Mercedes", city: "Mexicali", operation: "UPDATE", sequenceNum: 5 },
  { userId: 123, name: "Isabel", city: "Chihuahua", operation: "UPDATE", sequenceNum: 5 },
];
const TRUNCATE = [{ userId: null, name: null, city: null, operation: "TRUNCATE", sequenceNum: 3 }];

const SCD1 = [
  { userId: 124, name: "Raul", city: "Oaxaca" },
  { userId: 125, name: "Mercedes", city: "Guadalajara" },
  { userId: 126, name: "Lily", city: "Cancun" },
];
const SCD2 = [
  { userId: 123, name: "Isabel", city: "Monterrey", __START_AT: 1, __END_AT: 5 },
  { userId: 123, name: "Isabel", city: "Chihuahua", __START_AT: 5, __END_AT: 6 },
  { userId: 124, name: "Raul", city: "Oaxaca", __START_AT: 1, __END_AT: null },
  { userId: 125, name: "Mercedes", city: "Tijuana", __START_AT: 2, __END_AT: 5 },
  { userId: 125, name: "Mercedes", city: "Mexicali", __START_AT: 5, __END_AT: 6 },
  { userId: 125, name: "Mercedes", city: "Guadalajara", __START_AT: 6, __END_AT: null },
  { userId: 126, name: "Lily", city: "Cancun", __START_AT: 2, __END_AT: null },
];

function cdcFlow(name: string, landing: string, scd: 1 | 2) {
  return {
    name,
    source: {
      type: "auto_loader",
      path: landing,
      format: "json",
      schema: {
        userId: "BIGINT",
        name: "VARCHAR",
        city: "VARCHAR",
        operation: "VARCHAR",
        sequenceNum: "BIGINT",
      },
    },
    sql: scd === 1 ? "SELECT * FROM source" : "SELECT * FROM source WHERE operation <> 'TRUNCATE'",
    auto_cdc: {
      keys: ["userId"],
      sequence_by: "sequenceNum",
      apply_as_deletes: "operation = 'DELETE'",
      ...(scd === 1 ? { apply_as_truncates: "operation = 'TRUNCATE'" } : {}),
      except_column_list: ["operation", "sequenceNum"],
      stored_as_scd_type: scd,
    },
  };
}

describe("AUTO CDC through the API: Databricks' users example", () => {
  let cp: TestControlPlane;
  let pipelineId: string;
  let afterInserts: string;

  const run = async (body?: unknown) => {
    const { update_id } = await cp.client.startUpdate(pipelineId, body);
    const update = await cp.client.waitForUpdate(pipelineId, update_id, { intervalMs: 200 });
    expect(update.state, update.error?.message).toBe("COMPLETED");
  };
  const rows = async (table: string, order: string) =>
    (await cp.client.query(`cdc.users.${table}`, { sql: `SELECT * FROM t ORDER BY ${order}` })).rows;

  beforeAll(async () => {
    cp = await startTestControlPlane();
    ({ pipeline_id: pipelineId } = await cp.client.createPipeline({
      name: "users cdc",
      catalog: "cdc",
      schema: "users",
      configuration: { "pipelines.rewind.enabled": "true" },
      definition: {
        datasets: [
          { type: "streaming_table", name: "users_scd1", flows: [cdcFlow("scd1_cdc", cp.landing, 1)] },
          { type: "streaming_table", name: "users_scd2", flows: [cdcFlow("scd2_cdc", cp.landing, 2)] },
        ],
      },
    }));
    await cp.land("1.json", INSERTS);
    await run();
    afterInserts = (await cp.client.rewindPoints(pipelineId)).rewind_points[0]!.rewind_point_id;
    await cp.land("2.json", CHANGES);
    await run();
  });
  afterAll(async () => {
    await cp?.client.deletePipeline(pipelineId, true).catch(() => undefined);
    await cp?.close();
  });

  it("applies the changes by sequence: SCD type 1 and type 2", async () => {
    expect(await rows("users_scd1", "userId")).toEqual(SCD1);
    expect(await rows("users_scd2", "userId, __START_AT")).toEqual(SCD2);
  });

  it("writes the targets by MERGE with the change data feed", async () => {
    const { changes } = await cp.client.changes("cdc.users.users_scd1", { starting_version: 1 });
    const kinds = changes.map((c) => `${String(c["_change_type"])} ${String(c["userId"])}`).sort();
    expect(kinds).toEqual([
      "delete 123",
      "insert 123",
      "insert 124",
      "insert 125",
      "insert 126",
      "update_postimage 125",
      "update_preimage 125",
    ]);
    const { history } = await cp.client.history("cdc.users.users_scd2");
    expect(history.map((h) => h["operation"])).toContain("MERGE");
  });

  it("rewinds to the point between the batches and replays with no refresh", async () => {
    await run({ cause: "USER_ACTION", rewind_spec: { rewind_point_id: afterInserts } });
    expect((await rows("users_scd1", "userId")).map((r) => r["userId"])).toEqual([123, 124, 125, 126]);
    await run();
    expect(await rows("users_scd1", "userId")).toEqual(SCD1);
    expect(await rows("users_scd2", "userId, __START_AT")).toEqual(SCD2);
  });

  it("truncates the type 1 target below the truncate's sequence", async () => {
    await cp.land("3.json", TRUNCATE);
    await run();
    expect(await rows("users_scd1", "userId")).toEqual([
      { userId: 125, name: "Mercedes", city: "Guadalajara" },
    ]);
    expect(await rows("users_scd2", "userId, __START_AT")).toEqual(SCD2);
  });

  it("refuses an AUTO CDC flow whose keys its SQL does not produce, naming them, before it starts", async () => {
    const broken = cdcFlow("scd1_cdc", cp.landing, 1);
    await cp.client.editPipeline(pipelineId, {
      name: "users cdc",
      catalog: "cdc",
      schema: "users",
      configuration: { "pipelines.rewind.enabled": "true" },
      definition: {
        datasets: [
          {
            type: "streaming_table",
            name: "users_scd1",
            flows: [{ ...broken, auto_cdc: { ...broken.auto_cdc, keys: ["user_id"] } }],
          },
        ],
      },
    });
    await cp.land("4.json", INSERTS);
    // The flow continues from its state, so the start describes its output and refuses up front.
    const refused = await cp.client.startUpdate(pipelineId).then(
      () => undefined,
      (error: { status?: number; errorCode?: string; message: string }) => error,
    );
    expect(refused).toMatchObject({ status: 400, errorCode: "AUTO_CDC_COLUMN_NOT_FOUND" });
    expect(refused!.message).toContain('AUTO CDC flow "scd1_cdc": keys names "user_id", not in the output');
  });
});
