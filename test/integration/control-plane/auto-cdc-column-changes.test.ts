import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestControlPlane, type TestControlPlane } from "../../support/control-plane.ts";

/**
 * A changed column list of AUTO CDC flows, refused up front through the HTTP API (semantics.md
 * "Replay"): a definition whose written or tracked columns are not those the per-key state and the
 * table were written under is refused at validate_only and at start (from HEAD), at a rewind's dry
 * run and at the rewind (from the restored checkpoint), with `AUTO_CDC_STATE_INCOMPATIBLE` (409), the
 * flow named, the way out in the message, and no update recorded. The ways out work: a newly written
 * column or other history columns need a checkpoint reset of the target's flows (the re-read writes
 * them), a column no longer written a full refresh.
 */

const FIRST = [
  { userId: 124, city: "Oaxaca", zip: "68000", operation: "UPSERT", sequenceNum: 1 },
  { userId: 125, city: "Tijuana", zip: "22000", operation: "UPSERT", sequenceNum: 2 },
  { userId: 125, city: "Tijuana", zip: "22010", operation: "UPSERT", sequenceNum: 3 },
];

interface Columns {
  /** Whether `zip` is written to the targets. */
  readonly zip: boolean;
  /** The SCD type 2 target's track_history_column_list (unset: every written column). */
  readonly tracked?: readonly string[];
}

function flow(name: string, landing: string, scd: 1 | 2, columns: Columns) {
  return {
    name,
    source: {
      type: "auto_loader",
      path: landing,
      format: "json",
      schema: {
        userId: "BIGINT",
        city: "VARCHAR",
        zip: "VARCHAR",
        operation: "VARCHAR",
        sequenceNum: "BIGINT",
      },
    },
    sql: "SELECT * FROM source",
    auto_cdc: {
      keys: ["userId"],
      sequence_by: "sequenceNum",
      apply_as_deletes: "operation = 'DELETE'",
      except_column_list: ["operation", "sequenceNum", ...(columns.zip ? [] : ["zip"])],
      stored_as_scd_type: scd,
      ...(scd === 2 && columns.tracked ? { track_history_column_list: columns.tracked } : {}),
    },
  };
}

describe("AUTO CDC through the API: a changed column list is refused up front", () => {
  let cp: TestControlPlane;
  let pipelineId: string;
  let firstPoint: string;

  const definition = (columns: Columns) => ({
    datasets: ([1, 2] as const).map((scd) => ({
      type: "streaming_table",
      name: `scd${scd}`,
      flows: [flow(`scd${scd}_cdc`, cp.landing, scd, columns)],
    })),
  });
  const run = async (body?: unknown) => {
    const { update_id } = await cp.client.startUpdate(pipelineId, body);
    const update = await cp.client.waitForUpdate(pipelineId, update_id, { intervalMs: 200 });
    expect(update.state, update.error?.message).toBe("COMPLETED");
  };
  const rows = async (table: string, order: string) =>
    (await cp.client.query(`cdc.columns.${table}`, { sql: `SELECT * FROM t ORDER BY ${order}` })).rows;
  const latestPoint = async () =>
    (await cp.client.rewindPoints(pipelineId)).rewind_points[0]!.rewind_point_id;

  /** Every way to start from the state is refused alike, and records no update. */
  const expectRefused = async (point: string, message: RegExp) => {
    const updates = (await cp.client.listUpdates(pipelineId)).updates.length;
    for (const body of [
      { validate_only: true },
      {},
      { rewind_spec: { rewind_point_id: point, dry_run: true } },
      { rewind_spec: { rewind_point_id: point } },
    ]) {
      const refused = await refusal(cp.client.startUpdate(pipelineId, body));
      expect(refused, JSON.stringify(body)).toMatchObject({
        status: 409,
        errorCode: "AUTO_CDC_STATE_INCOMPATIBLE",
      });
      expect(refused!.message, JSON.stringify(body)).toMatch(
        /^AUTO CDC flow "scd([12])_cdc" into "scd\1" cannot continue from its per-key state \(checkpoint \d+\)/,
      );
      expect(refused!.message, JSON.stringify(body)).toMatch(message);
    }
    expect((await cp.client.listUpdates(pipelineId)).updates.length).toBe(updates);
  };

  beforeAll(async () => {
    cp = await startTestControlPlane();
    ({ pipeline_id: pipelineId } = await cp.client.createPipeline({
      name: "cdc columns",
      catalog: "cdc",
      schema: "columns",
      configuration: { "pipelines.rewind.enabled": "true" },
      definition: definition({ zip: false }),
    }));
    await cp.land("1.json", FIRST);
    await run();
    firstPoint = await latestPoint();
  });
  afterAll(async () => {
    await cp?.client.deletePipeline(pipelineId, true).catch(() => undefined);
    await cp?.close();
  });

  it("a newly written column: refused with the checkpoint reset as the way out, which then writes it", async () => {
    await cp.client.editPipeline(pipelineId, { definition: definition({ zip: true }) });
    await expectRefused(
      firstPoint,
      /now write \(city, zip\), the state holds events of \(city\): zip newly written\. Reset the checkpoints of the flows into "scd[12]" \(reset_checkpoint_selection: \["scd[12]_cdc"\]\).*full_refresh_selection.*revert the change, or rewind to a point taken under the current definition/,
    );

    await run({ reset_checkpoint_selection: ["scd1_cdc", "scd2_cdc"] });
    expect(await rows("scd1", "userId")).toEqual([
      { userId: 124, city: "Oaxaca", zip: "68000" },
      { userId: 125, city: "Tijuana", zip: "22010" },
    ]);
    expect(await rows("scd2", "userId, __START_AT")).toEqual([
      { userId: 124, city: "Oaxaca", __START_AT: 1, __END_AT: null, zip: "68000" },
      { userId: 125, city: "Tijuana", __START_AT: 2, __END_AT: 3, zip: "22000" },
      { userId: 125, city: "Tijuana", __START_AT: 3, __END_AT: null, zip: "22010" },
    ]);
    expect((await cp.client.listUpdates(pipelineId)).updates.length).toBeGreaterThan(0);
    const validation = await cp.client.startUpdate(pipelineId, { validate_only: true });
    expect((await cp.client.waitForUpdate(pipelineId, validation.update_id)).state).toBe("COMPLETED");
    // The point before the change holds the other list's state: a rewind to it is refused.
    const old = await refusal(
      cp.client.startUpdate(pipelineId, { rewind_spec: { rewind_point_id: firstPoint, dry_run: true } }),
    );
    expect(old).toMatchObject({ status: 409, errorCode: "AUTO_CDC_STATE_INCOMPATIBLE" });
    expect(old!.message).toMatch(/now write \(city, zip\), the state holds events of \(city\)/);
  });

  it("other history columns: refused, and a checkpoint reset re-splits the history", async () => {
    const point = await latestPoint();
    await cp.client.editPipeline(pipelineId, { definition: definition({ zip: true, tracked: ["city"] }) });
    const updates = (await cp.client.listUpdates(pipelineId)).updates.length;
    const refused = await refusal(cp.client.startUpdate(pipelineId, {}));
    expect(refused).toMatchObject({ status: 409, errorCode: "AUTO_CDC_STATE_INCOMPATIBLE" });
    expect(refused!.message).toMatch(
      /^AUTO CDC flow "scd2_cdc" into "scd2" cannot continue .*its track_history_\* columns are now \(city\), the table's history was split on \(city, zip\)\. Reset the checkpoints of the flows into "scd2" \(reset_checkpoint_selection: \["scd2_cdc"\]\)/,
    );
    const dry = await refusal(
      cp.client.startUpdate(pipelineId, { rewind_spec: { rewind_point_id: point, dry_run: true } }),
    );
    expect(dry).toMatchObject({ status: 409, errorCode: "AUTO_CDC_STATE_INCOMPATIBLE" });
    expect((await cp.client.listUpdates(pipelineId)).updates.length).toBe(updates);

    await run({ reset_checkpoint_selection: ["scd2_cdc"] });
    // 125's zip change no longer starts a version: it updates the current one in place.
    expect(await rows("scd2", "userId, __START_AT")).toEqual([
      { userId: 124, city: "Oaxaca", __START_AT: 1, __END_AT: null, zip: "68000" },
      { userId: 125, city: "Tijuana", __START_AT: 2, __END_AT: null, zip: "22010" },
    ]);
  });

  it("a column no longer written: refused with the full refresh as the only way out besides reverting", async () => {
    await cp.client.editPipeline(pipelineId, { definition: definition({ zip: false, tracked: ["city"] }) });
    await expectRefused(
      await latestPoint(),
      /zip no longer written\. The table no longer fits either: fully refresh "scd[12]" \(full_refresh_selection: \["scd[12]"\]\), revert the change, or rewind/,
    );
    const refused = await refusal(cp.client.startUpdate(pipelineId, {}));
    expect(refused!.message).not.toMatch(/reset_checkpoint_selection/);

    await run({ full_refresh_selection: ["scd1", "scd2"] });
    expect(await rows("scd1", "userId")).toEqual([
      { userId: 124, city: "Oaxaca" },
      { userId: 125, city: "Tijuana" },
    ]);
    expect(await rows("scd2", "userId, __START_AT")).toEqual([
      { userId: 124, city: "Oaxaca", __START_AT: 1, __END_AT: null },
      { userId: 125, city: "Tijuana", __START_AT: 2, __END_AT: null },
    ]);
  });
});

const refusal = (promise: Promise<unknown>) =>
  promise.then(
    () => undefined,
    (error: { status?: number; errorCode?: string; message: string }) => error,
  );
