import { mkdir } from "node:fs/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestControlPlane, type TestControlPlane } from "../../support/control-plane.ts";

/**
 * Several AUTO CDC flows into one target through HTTP on the local runtime, as Databricks' multiple
 * `create_auto_cdc_flow` into one table: a live feed and a backfill, each from its own folder with its
 * own checkpoint. Their events are applied as one set by sequence: the backfill's older changes,
 * arriving after the live feed's newer ones, never overwrite them (SCD type 1) and land in the
 * history where their sequence puts them (SCD type 2). A checkpoint reset of the backfill alone, and
 * a rewind to before the backfill with a replay, converge to the same tables. Flows that order the
 * target differently are refused at create, dry run and edit. A changed column list does not fit the
 * flows' state (AUTO_CDC_STATE_INCOMPATIBLE, up front), and a dropped column not the table: it needs a
 * full refresh (auto-cdc-column-changes.test.ts covers every way in and out).
 */

const LIVE = [
  { userId: 124, city: "Oaxaca", operation: "UPSERT", sequenceNum: 10 },
  { userId: 125, city: "Mexicali", operation: "UPSERT", sequenceNum: 12 },
];
/** Older than the live feed's changes, and read after them. */
const BACKFILL = [
  { userId: 124, city: "Monterrey", operation: "UPSERT", sequenceNum: 3 },
  { userId: 125, city: "Tijuana", operation: "UPSERT", sequenceNum: 2 },
  { userId: 125, city: null, operation: "DELETE", sequenceNum: 5 },
  { userId: 126, city: "Cancun", operation: "UPSERT", sequenceNum: 1 },
];

const SCD1 = [
  { userId: 124, city: "Oaxaca" },
  { userId: 125, city: "Mexicali" },
  { userId: 126, city: "Cancun" },
];
const SCD2 = [
  { userId: 124, city: "Monterrey", __START_AT: 3, __END_AT: 10 },
  { userId: 124, city: "Oaxaca", __START_AT: 10, __END_AT: null },
  { userId: 125, city: "Tijuana", __START_AT: 2, __END_AT: 5 },
  { userId: 125, city: "Mexicali", __START_AT: 12, __END_AT: null },
  { userId: 126, city: "Cancun", __START_AT: 1, __END_AT: null },
];
const LIVE_SCD2 = [
  { userId: 124, city: "Oaxaca", __START_AT: 10, __END_AT: null },
  { userId: 125, city: "Mexicali", __START_AT: 12, __END_AT: null },
];

type Cdc = Record<string, unknown>;

function flow(name: string, path: string, scd: 1 | 2, cdc: Cdc = {}) {
  return {
    name,
    source: {
      type: "auto_loader",
      path,
      format: "json",
      schema: { userId: "BIGINT", city: "VARCHAR", operation: "VARCHAR", sequenceNum: "BIGINT" },
    },
    sql: "SELECT * FROM source",
    auto_cdc: {
      keys: ["userId"],
      sequence_by: "sequenceNum",
      apply_as_deletes: "operation = 'DELETE'",
      except_column_list: ["operation", "sequenceNum"],
      stored_as_scd_type: scd,
      ...cdc,
    },
  };
}

describe("AUTO CDC through the API: several flows into one target", () => {
  let cp: TestControlPlane;
  let pipelineId: string;
  let beforeBackfill: string;

  const definition = (backfill: Cdc = {}) => ({
    datasets: ([1, 2] as const).map((scd) => ({
      type: "streaming_table",
      name: `scd${scd}`,
      flows: [
        flow(`scd${scd}_live`, `${cp.landing}/live`, scd),
        flow(`scd${scd}_backfill`, `${cp.landing}/backfill`, scd, backfill),
      ],
    })),
  });
  const spec = (dryRun = false, backfill: Cdc = {}) => ({
    name: "cdc flows",
    catalog: "cdc",
    schema: "flows",
    configuration: { "pipelines.rewind.enabled": "true" },
    ...(dryRun ? { dry_run: true } : {}),
    definition: definition(backfill),
  });
  const run = async (body?: unknown) => {
    const { update_id } = await cp.client.startUpdate(pipelineId, body);
    const update = await cp.client.waitForUpdate(pipelineId, update_id, { intervalMs: 200 });
    expect(update.state, update.error?.message).toBe("COMPLETED");
  };
  const rows = async (table: string, order: string) =>
    (await cp.client.query(`cdc.flows.${table}`, { sql: `SELECT * FROM t ORDER BY ${order}` })).rows;
  const expectConverged = async () => {
    expect(await rows("scd1", "userId")).toEqual(SCD1);
    expect(await rows("scd2", "userId, __START_AT")).toEqual(SCD2);
  };

  beforeAll(async () => {
    cp = await startTestControlPlane();
    await mkdir(`${cp.landing}/live`, { recursive: true });
    await mkdir(`${cp.landing}/backfill`, { recursive: true });
    ({ pipeline_id: pipelineId } = await cp.client.createPipeline(spec()));
    await cp.land("live/1.json", LIVE);
    await run({ refresh_selection: ["scd1_live", "scd2_live"] });
    beforeBackfill = (await cp.client.rewindPoints(pipelineId)).rewind_points[0]!.rewind_point_id;
    await cp.land("backfill/1.json", BACKFILL);
    await run();
  });
  afterAll(async () => {
    await cp?.client.deletePipeline(pipelineId, true).catch(() => undefined);
    await cp?.close();
  });

  it("applies both flows' events by sequence: the backfill's older changes never overwrite newer ones", async () => {
    await expectConverged();
  });

  it("converges after a checkpoint reset of one flow", async () => {
    await run({ reset_checkpoint_selection: ["scd1_backfill", "scd2_backfill"] });
    await expectConverged();
  });

  it("rewinds to before the backfill and replays to the same tables", async () => {
    await run({ cause: "USER_ACTION", rewind_spec: { rewind_point_id: beforeBackfill } });
    expect(await rows("scd1", "userId")).toEqual([
      { userId: 124, city: "Oaxaca" },
      { userId: 125, city: "Mexicali" },
    ]);
    expect(await rows("scd2", "userId, __START_AT")).toEqual(LIVE_SCD2);
    await run();
    await expectConverged();
  });

  it("refuses flows that order the target differently, by name, at create, dry run and edit", async () => {
    const cases: [Cdc, RegExp][] = [
      [{ keys: ["userId", "city"] }, /keys \["city","userId"\] \(flow "scd1_live": \["userId"\]\)/],
      [{ sequence_by: ["userId"], keys: ["city"] }, /keys \["city"\].*sequence_by \["userId"\]/],
      [{ ignore_null_updates: true }, /ignore_null_updates true \(flow "scd1_live": false\)/],
    ];
    for (const [backfill, message] of cases) {
      for (const dryRun of [true, false]) {
        const refused = await refusal(
          cp.client.createPipeline({ ...spec(dryRun, backfill), name: "refused" }),
        );
        expect(refused).toMatchObject({ status: 400, errorCode: "AUTO_CDC_FLOWS_INCOMPATIBLE" });
        expect(refused!.message).toContain(
          'AUTO CDC flows "scd1_live" and "scd1_backfill" both write "scd1"',
        );
        expect(refused!.message).toMatch(message);
      }
    }
    const edit = await refusal(
      cp.client.editPipeline(pipelineId, { definition: definition({ keys: ["city"] }) }),
    );
    expect(edit).toMatchObject({ status: 400, errorCode: "AUTO_CDC_FLOWS_INCOMPATIBLE" });
    await expectConverged();
  });

  it("refuses a changed column list until the state and the table fit it: a dropped column needs a full refresh", async () => {
    // scd1's flows drop city; scd2's stay as they are.
    const dropped = definition({ except_column_list: ["operation", "sequenceNum", "city"] }).datasets[0]!;
    const edited = definition();
    edited.datasets[0] = {
      ...dropped,
      flows: dropped.flows.map((f) => ({ ...f, auto_cdc: dropped.flows[1]!.auto_cdc })),
    };
    await cp.client.editPipeline(pipelineId, { definition: edited });
    await cp.land("live/2.json", [{ userId: 127, city: "Puebla", operation: "UPSERT", sequenceNum: 20 }]);
    const failed = async (body?: unknown) => {
      const { update_id } = await cp.client.startUpdate(pipelineId, body);
      return (await cp.client.waitForUpdate(pipelineId, update_id, { intervalMs: 200 })).error?.message;
    };
    const refused = await refusal(cp.client.startUpdate(pipelineId, {}));
    expect(refused).toMatchObject({ status: 409, errorCode: "AUTO_CDC_STATE_INCOMPATIBLE" });
    expect(refused!.message).toMatch(
      /AUTO CDC flow "scd1_live" into "scd1" cannot continue from its per-key state.*city no longer written.*full_refresh_selection: \["scd1"\]/,
    );
    expect(await failed({ reset_checkpoint_selection: ["scd1_live", "scd1_backfill"] })).toMatch(
      /the new definition of scd1 is incompatible with its table.*fully refresh the dataset/,
    );
    await run({ full_refresh_selection: ["scd1"] });
    expect(await rows("scd1", "userId")).toEqual([
      { userId: 124 },
      { userId: 125 },
      { userId: 126 },
      { userId: 127 },
    ]);
  });
});

const refusal = (promise: Promise<unknown>) =>
  promise.then(
    () => undefined,
    (error: { status?: number; errorCode?: string; message: string }) => error,
  );
