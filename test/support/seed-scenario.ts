import { expect } from "vitest";
import type { TestControlPlane } from "./control-plane.ts";

/**
 * The seed's rewind-and-replay walk-through (shared/seeds/databricks-rewind-and-replay.txt) as one
 * scenario that any Databricks client drives: find a point, dry run, rewind by point, deploy a fix,
 * replay, rewind by timestamp, replay again. The pipeline is named so that the seed's bodies work
 * verbatim (its root dataset is `catalog.schema.table`); the tables are asserted after every step
 * through Ebb's own client, so a client that only seems to work fails here.
 */

export const ROOT_TABLE = "catalog.schema.table";

/** What a client must do for the scenario, each the way the seed writes it for that client. */
export interface SeedClient {
  /** The rewind points in the event log (`rewind_summary` events), newest first. */
  rewindPoints(pipelineId: string): Promise<readonly { id: string; timestamp: string }[]>;
  /** A rewind by `rewind_point_id`; `dryRun` rehearses it. Answers the update id. */
  rewindToPoint(pipelineId: string, pointId: string, dryRun: boolean): Promise<string>;
  /** A rewind by `rewind_timestamp`; `dryRun` rehearses it. Answers the update id. */
  rewindToTimestamp(pipelineId: string, timestamp: string, dryRun: boolean): Promise<string>;
  /** An update with no `rewind_spec`. */
  replay(pipelineId: string): Promise<string>;
  /** Polls the update to a terminal state; answers that state. */
  waitForUpdate(pipelineId: string, updateId: string): Promise<string>;
}

export const seedDefinition = (landing: string, cleanSql: string) => ({
  datasets: [
    {
      type: "streaming_table",
      name: "table",
      flows: [
        {
          name: "ingest",
          source: {
            type: "auto_loader",
            path: landing,
            format: "json",
            schema: { id: "BIGINT", amount: "BIGINT" },
          },
          sql: "SELECT * FROM source",
        },
      ],
    },
    {
      type: "streaming_table",
      name: "clean",
      flows: [{ name: "clean_flow", source: { type: "stream", dataset: "table" }, sql: cleanSql }],
    },
    {
      type: "materialized_view",
      name: "totals",
      sql: "SELECT count(*) AS orders, sum(amount) AS amount FROM clean",
    },
  ],
});

export const BAD_SQL = "SELECT id, amount FROM source";
export const FIXED_SQL = "SELECT id, amount FROM source WHERE amount > 0";

export interface SeedPipeline {
  readonly pipelineId: string;
  /** When the bad batch's update started: the point to rewind to is the newest one before it. */
  readonly badUpdateTime: number;
}

/**
 * The seed's problem: a pipeline that ran a good batch (ids 1-3) and then a bad one (ids 4-5, with
 * negative amounts). `create` makes the pipeline the client's way (or Ebb's when not given).
 */
export async function seedPipelineWithBadBatch(
  cp: TestControlPlane,
  create: (definition: ReturnType<typeof seedDefinition>) => Promise<string> = async (definition) =>
    (
      await cp.client.createPipeline({
        name: `seed ${Date.now()}`,
        catalog: "catalog",
        schema: "schema",
        configuration: { "pipelines.rewind.betaEnabled": "true" },
        definition,
      })
    ).pipeline_id,
): Promise<SeedPipeline> {
  const pipelineId = await create(seedDefinition(cp.landing, BAD_SQL));
  const run = async () => {
    const { update_id } = await cp.client.startUpdate(pipelineId);
    return cp.client.waitForUpdate(pipelineId, update_id, { intervalMs: 200 });
  };
  await cp.land(
    "good.json",
    [1, 2, 3].map((id) => ({ id, amount: id * 10 })),
  );
  expect((await run()).state).toBe("COMPLETED");
  // The onset midpoint (whole seconds, as the seed's recipe truncates them) must fall after the last
  // good commit of every table, the downstream ones included, which a loaded machine delays.
  await new Promise((resolve) => setTimeout(resolve, 4000));
  const badUpdateTime = Date.now();
  await cp.land(
    "bad.json",
    [4, 5].map((id) => ({ id, amount: -1000 })),
  );
  expect((await run()).state).toBe("COMPLETED");
  return { pipelineId, badUpdateTime };
}

/** Runs the whole walk-through with `client`, asserting the tables after each step. */
export async function runSeedScenario(
  cp: TestControlPlane,
  client: SeedClient,
  { pipelineId, badUpdateTime }: SeedPipeline,
): Promise<void> {
  const totals = async () => (await cp.client.query("catalog.schema.totals")).rows[0];
  const rawCount = async () =>
    (await cp.client.query(ROOT_TABLE, { sql: "SELECT count(*) AS n FROM t" })).rows[0]!["n"];
  const completes = async (updateId: Promise<string>) =>
    expect(await client.waitForUpdate(pipelineId, await updateId)).toBe("COMPLETED");
  expect(await totals()).toEqual({ orders: 5, amount: 60 - 2000 });

  // Find a rewind point: the most recent one before the bad data was written.
  const points = await client.rewindPoints(pipelineId);
  const good = points.find((p) => Date.parse(p.timestamp) < badUpdateTime);
  expect(good, "a rewind point before the bad batch").toBeDefined();

  // Rehearse, then rewind to the point: every table is back at the good state.
  await completes(client.rewindToPoint(pipelineId, good!.id, true));
  expect(await totals()).toEqual({ orders: 5, amount: -1940 });
  await completes(client.rewindToPoint(pipelineId, good!.id, false));
  expect(await totals()).toEqual({ orders: 3, amount: 60 });

  // Deploy the fix and replay: the bad records are read again, once, and filtered.
  await cp.client.editPipeline(pipelineId, { definition: seedDefinition(cp.landing, FIXED_SQL) });
  await completes(client.replay(pipelineId));
  expect(await totals()).toEqual({ orders: 3, amount: 60 });
  expect(await rawCount()).toBe(5);

  // Rewind by the onset's midpoint timestamp (rehearsed first), then replay again: no duplicates.
  const onset = await cp.client.onset(ROOT_TABLE, { predicate: "amount < 0", starting_version: 1 });
  expect(onset).toMatchObject({ found: true, first_bad_version: 2 });
  const timestamp = onset["rewind_timestamp"] as string;
  await completes(client.rewindToTimestamp(pipelineId, timestamp, true));
  expect(await rawCount()).toBe(5);
  await completes(client.rewindToTimestamp(pipelineId, timestamp, false));
  expect(await rawCount()).toBe(3);
  await completes(client.replay(pipelineId));
  expect(await rawCount()).toBe(5);
  expect(await totals()).toEqual({ orders: 3, amount: 60 });
}
