import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestControlPlane, type TestControlPlane } from "../../support/control-plane.ts";

/**
 * Streaming readers of AUTO CDC targets, through HTTP on the local runtime: a `stream` source on an
 * SCD type 1 or 2 target reads the target's change data feed (its MERGE commits update and delete
 * rows, which an append-only reader could not follow), so the reader gets the inserts, the update
 * pre and post images and the deletes, each with `_change_type` and `_commit_version`.
 */

const INSERTS = [
  { userId: 124, city: "Oaxaca", operation: "INSERT", sequenceNum: 1 },
  { userId: 123, city: "Monterrey", operation: "INSERT", sequenceNum: 1 },
  { userId: 125, city: "Tijuana", operation: "INSERT", sequenceNum: 2 },
];
const CHANGES = [
  { userId: 123, city: null, operation: "DELETE", sequenceNum: 6 },
  { userId: 125, city: "Guadalajara", operation: "UPDATE", sequenceNum: 6 },
];

function cdcFlow(name: string, landing: string, scd: 1 | 2) {
  return {
    name,
    source: {
      type: "auto_loader",
      path: landing,
      format: "json",
      schema: { userId: "BIGINT", city: "VARCHAR", operation: "VARCHAR", sequenceNum: "BIGINT" },
    },
    sql: "SELECT * FROM source",
    auto_cdc: {
      keys: ["userId"],
      sequence_by: "sequenceNum",
      apply_as_deletes: "operation = 'DELETE'",
      except_column_list: ["operation"],
      stored_as_scd_type: scd,
    },
  };
}

function reader(name: string, upstream: string) {
  return {
    type: "streaming_table",
    name,
    flows: [
      {
        name: `${name}_flow`,
        source: { type: "stream", dataset: upstream },
        sql: "SELECT * EXCLUDE (_commit_timestamp) FROM source",
      },
    ],
  };
}

describe("AUTO CDC through the API: streaming readers of the targets", () => {
  let cp: TestControlPlane;
  let pipelineId: string;

  const run = async () => {
    const { update_id } = await cp.client.startUpdate(pipelineId);
    const update = await cp.client.waitForUpdate(pipelineId, update_id, { intervalMs: 200 });
    expect(update.state, update.error?.message).toBe("COMPLETED");
  };
  const rows = async (table: string) =>
    (
      await cp.client.query(`cdc.feed.${table}`, {
        sql: "SELECT * FROM t ORDER BY _commit_version, userId, _change_type",
      })
    ).rows;

  beforeAll(async () => {
    cp = await startTestControlPlane();
    ({ pipeline_id: pipelineId } = await cp.client.createPipeline({
      name: "cdc feed",
      catalog: "cdc",
      schema: "feed",
      definition: {
        datasets: [
          { type: "streaming_table", name: "users_scd1", flows: [cdcFlow("scd1_cdc", cp.landing, 1)] },
          { type: "streaming_table", name: "users_scd2", flows: [cdcFlow("scd2_cdc", cp.landing, 2)] },
          reader("scd1_changes", "users_scd1"),
          reader("scd2_changes", "users_scd2"),
        ],
      },
    }));
    await cp.land("1.json", INSERTS);
    await run();
    await cp.land("2.json", CHANGES);
    await run();
  });
  afterAll(async () => {
    await cp?.client.deletePipeline(pipelineId, true).catch(() => undefined);
    await cp?.close();
  });

  it("an SCD type 1 target's reader gets its inserts, updates and deletes", async () => {
    expect(await rows("scd1_changes")).toEqual([
      { userId: 123, city: "Monterrey", sequenceNum: 1, _change_type: "insert", _commit_version: 1 },
      { userId: 124, city: "Oaxaca", sequenceNum: 1, _change_type: "insert", _commit_version: 1 },
      { userId: 125, city: "Tijuana", sequenceNum: 2, _change_type: "insert", _commit_version: 1 },
      { userId: 123, city: "Monterrey", sequenceNum: 1, _change_type: "delete", _commit_version: 2 },
      {
        userId: 125,
        city: "Guadalajara",
        sequenceNum: 6,
        _change_type: "update_postimage",
        _commit_version: 2,
      },
      { userId: 125, city: "Tijuana", sequenceNum: 2, _change_type: "update_preimage", _commit_version: 2 },
    ]);
  });

  it("an SCD type 2 target's reader gets each version's insert and the closing updates", async () => {
    const feed = (await rows("scd2_changes")).map(
      (r) =>
        `${String(r["_commit_version"])} ${String(r["_change_type"])} ${String(r["userId"])} ${String(r["city"])} ${String(r["__END_AT"])}`,
    );
    expect(feed).toEqual([
      "1 insert 123 Monterrey null",
      "1 insert 124 Oaxaca null",
      "1 insert 125 Tijuana null",
      "2 update_postimage 123 Monterrey 6",
      "2 update_preimage 123 Monterrey null",
      "2 insert 125 Guadalajara null",
      "2 update_postimage 125 Tijuana 6",
      "2 update_preimage 125 Tijuana null",
    ]);
  });
});
