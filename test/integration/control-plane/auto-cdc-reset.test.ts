import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestControlPlane, type TestControlPlane } from "../../support/control-plane.ts";

/**
 * Checkpoint reset of AUTO CDC flows through HTTP on the local runtime: the flows re-read their source
 * from the start against an empty per-key state while the targets keep their rows, and converge to
 * exactly what a fresh run over every event gives. The late event below merges two SCD type 2
 * versions, so a version the earlier run wrote is no longer produced: it must be deleted, not left
 * beside the re-read history (a duplicate current row).
 */

const FIRST = [
  { userId: 124, city: "Oaxaca", operation: "UPSERT", sequenceNum: 1 },
  { userId: 125, city: "Tijuana", operation: "UPSERT", sequenceNum: 2 },
  { userId: 125, city: "Mexicali", operation: "UPSERT", sequenceNum: 5 },
];
/** A late copy of 125's move to Mexicali, sequenced at 3: its version now starts there. */
const SECOND = [
  { userId: 125, city: "Mexicali", operation: "UPSERT", sequenceNum: 3 },
  { userId: 126, city: "Cancun", operation: "UPSERT", sequenceNum: 2 },
  { userId: 124, city: null, operation: "DELETE", sequenceNum: 4 },
];
const THIRD = [{ userId: 126, city: "Tulum", operation: "UPSERT", sequenceNum: 7 }];

const SCD2_AFTER_SECOND = [
  { userId: 124, city: "Oaxaca", __START_AT: 1, __END_AT: 4 },
  { userId: 125, city: "Tijuana", __START_AT: 2, __END_AT: 3 },
  { userId: 125, city: "Mexicali", __START_AT: 3, __END_AT: null },
  { userId: 126, city: "Cancun", __START_AT: 2, __END_AT: null },
];

function flow(name: string, landing: string, scd: 1 | 2, filesPerBatch?: number) {
  return {
    name,
    source: {
      type: "auto_loader",
      path: landing,
      format: "json",
      schema: { userId: "BIGINT", city: "VARCHAR", operation: "VARCHAR", sequenceNum: "BIGINT" },
    },
    sql: "SELECT * FROM source",
    ...(filesPerBatch ? { options: { max_files_per_batch: filesPerBatch } } : {}),
    auto_cdc: {
      keys: ["userId"],
      sequence_by: "sequenceNum",
      apply_as_deletes: "operation = 'DELETE'",
      except_column_list: ["operation", "sequenceNum"],
      stored_as_scd_type: scd,
    },
  };
}

describe("AUTO CDC through the API: checkpoint reset", () => {
  let cp: TestControlPlane;
  let pipelineId: string;

  const spec = (filesPerBatch?: number) => ({
    name: "cdc reset",
    catalog: "cdc",
    schema: "reset",
    definition: {
      datasets: [
        { type: "streaming_table", name: "scd1", flows: [flow("scd1_cdc", cp.landing, 1, filesPerBatch)] },
        { type: "streaming_table", name: "scd2", flows: [flow("scd2_cdc", cp.landing, 2, filesPerBatch)] },
      ],
    },
  });
  const run = async (body?: unknown) => {
    const { update_id } = await cp.client.startUpdate(pipelineId, body);
    const update = await cp.client.waitForUpdate(pipelineId, update_id, { intervalMs: 200 });
    expect(update.state, update.error?.message).toBe("COMPLETED");
  };
  const rows = async (table: string, order: string) =>
    (await cp.client.query(`cdc.reset.${table}`, { sql: `SELECT * FROM t ORDER BY ${order}` })).rows;
  const reset = { reset_checkpoint_selection: ["scd1_cdc", "scd2_cdc"] };

  beforeAll(async () => {
    cp = await startTestControlPlane();
    ({ pipeline_id: pipelineId } = await cp.client.createPipeline(spec()));
    await cp.land("1.json", FIRST);
    await run();
    await cp.land("2.json", SECOND);
  });
  afterAll(async () => {
    await cp?.client.deletePipeline(pipelineId, true).catch(() => undefined);
    await cp?.close();
  });

  it("re-reads the source in one batch and converges: no version left from the earlier run", async () => {
    expect(await rows("scd2", "userId, __START_AT")).toEqual([
      { userId: 124, city: "Oaxaca", __START_AT: 1, __END_AT: null },
      { userId: 125, city: "Tijuana", __START_AT: 2, __END_AT: 5 },
      { userId: 125, city: "Mexicali", __START_AT: 5, __END_AT: null },
    ]);
    await run(reset);
    expect(await rows("scd2", "userId, __START_AT")).toEqual(SCD2_AFTER_SECOND);
    expect(await rows("scd1", "userId")).toEqual([
      { userId: 125, city: "Mexicali" },
      { userId: 126, city: "Cancun" },
    ]);
  });

  it("re-reads file by file after a second reset, and reads on incrementally afterwards", async () => {
    await cp.client.editPipeline(pipelineId, spec(1));
    await run(reset);
    expect(await rows("scd2", "userId, __START_AT")).toEqual(SCD2_AFTER_SECOND);
    await cp.land("3.json", THIRD);
    await run();
    expect(await rows("scd2", "userId, __START_AT")).toEqual([
      ...SCD2_AFTER_SECOND.slice(0, 3),
      { userId: 126, city: "Cancun", __START_AT: 2, __END_AT: 7 },
      { userId: 126, city: "Tulum", __START_AT: 7, __END_AT: null },
    ]);
    expect(await rows("scd1", "userId")).toEqual([
      { userId: 125, city: "Mexicali" },
      { userId: 126, city: "Tulum" },
    ]);
  });
});
