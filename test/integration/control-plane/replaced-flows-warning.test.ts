import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { runCli } from "../../../shared/cli/main.ts";
import { startTestControlPlane, type TestControlPlane } from "../../support/control-plane.ts";

/**
 * An edit that renames the flow writing a table that holds data: the new flow would read its source
 * from the start and append it again, so the edit is applied but says so, in its answer and as a WARN
 * `warning` event. Renaming the flow of an empty table (never written, or written no rows), or a flow
 * that never wrote, or adding a flow beside one, says nothing. The CLI prints the warning on stderr.
 */

let cp: TestControlPlane;

beforeAll(async () => {
  cp = await startTestControlPlane();
});
afterAll(() => cp?.close());

const flow = (name: string, folder: string, sql = "SELECT * FROM source") => ({
  name,
  source: { type: "auto_loader", path: folder, format: "json", schema: { id: "BIGINT" } },
  sql,
});
/** Reads the landed file and keeps none of it: its checkpoint moves, its table stays empty. */
const NONE = "SELECT * FROM source WHERE id < 0";
const table = (name: string, flows: unknown[]) => ({ type: "streaming_table", name, flows });

it("warns when the flows writing a table with rows are replaced, and only then", async () => {
  const landed = path.join(cp.landing, "replaced_landed");
  const empty = path.join(cp.landing, "replaced_empty");
  const later = path.join(cp.landing, "replaced_later");
  await Promise.all([mkdir(landed), mkdir(empty), mkdir(later)]);
  await writeFile(path.join(landed, "1.json"), '{"id": 1}\n{"id": 2}\n');
  const { pipeline_id: pipelineId } = await cp.client.createPipeline({
    name: "replaced flows",
    catalog: "replaced",
    schema: "flows",
    definition: {
      datasets: [
        table("orders", [flow("ingest", landed)]),
        table("quiet", [flow("clean", empty)]),
        table("filtered", [flow("keep_none", landed, NONE)]),
      ],
    },
  });
  const run = async () => {
    const { update_id: updateId } = await cp.client.startUpdate(pipelineId);
    const update = await cp.client.waitForUpdate(pipelineId, updateId, { intervalMs: 200 });
    expect(update.state, update.error?.message).toBe("COMPLETED");
  };
  await run();
  const warnings = async () =>
    (await cp.client.events(pipelineId, { filter: "event_type = 'warning'" })).events;

  const datasets = (orders: unknown[]) => [
    table("orders", orders),
    table("quiet", [flow("quiet_clean", empty)]),
    table("filtered", [flow("none_kept", landed, NONE)]),
  ];
  const edit = (orders: unknown[]) =>
    cp.client.editPipeline(pipelineId, { definition: { datasets: datasets(orders) } });

  // The empty tables' flows renamed, a flow added beside the one that wrote: nothing to warn about.
  const quiet = await edit([flow("ingest", landed), flow("backfill", later)]);
  expect(quiet.warnings).toBeUndefined();
  // Renaming the flow that never wrote, in a table that holds rows: nothing of it is read twice.
  const unwritten = await edit([flow("ingest", landed), flow("late_backfill", later)]);
  expect(unwritten.warnings).toBeUndefined();
  expect(await warnings()).toEqual([]);

  const renamed = await edit([flow("raw_orders", landed), flow("late_backfill", later)]);
  expect(renamed.warnings).toEqual([
    expect.objectContaining({ dataset: "orders", removed_flows: ["ingest"], new_flows: ["raw_orders"] }),
  ]);
  const message = renamed.warnings![0]!.message;
  expect(message).toContain("full_refresh_selection");
  expect(message).toContain("keep the flow's name");
  const events = await warnings();
  expect(events).toHaveLength(1);
  expect(events[0]).toMatchObject({
    level: "WARN",
    message,
    origin: { dataset_name: "orders" },
    details: { flows_replaced: { dataset: "orders", removed_flows: ["ingest"], new_flows: ["raw_orders"] } },
  });

  // `ebb pipelines update` (and `ebb deploy`, through the same path) prints it on stderr.
  await run();
  const file = path.join(cp.landing, "..", `${path.basename(cp.landing)}-replaced-flows.json`);
  await writeFile(
    file,
    JSON.stringify({
      name: "replaced flows",
      datasets: datasets([flow("orders_in", landed), flow("late_backfill", later)]),
    }),
  );
  let err = "";
  const code = await runCli(
    ["pipelines", "update", pipelineId, file, "--endpoint", cp.plane.endpoint, "--token", cp.plane.token],
    { out: () => {}, err: (text) => (err += text), confirm: async () => true, width: 80 },
  );
  expect(code, err).toBe(0);
  expect(err).toContain(
    "ebb: warning: Table orders holds data and its flow raw_orders is replaced by flow orders_in",
  );
});

/**
 * An edit that moves a flow, under its name, to another table: the flow keeps its checkpoint and
 * continues where it stopped, so the new table misses what it read before. The edit says so when the
 * flow has read something; moving a flow that never ran says nothing.
 */
it("warns when a flow that has read its source is moved to another table, and only then", async () => {
  const landed = path.join(cp.landing, "moved_landed");
  const later = path.join(cp.landing, "moved_later");
  await Promise.all([mkdir(landed), mkdir(later)]);
  await writeFile(path.join(landed, "1.json"), '{"id": 1}\n{"id": 2}\n');
  const { pipeline_id: pipelineId } = await cp.client.createPipeline({
    name: "moved flows",
    catalog: "moved",
    schema: "flows",
    definition: {
      datasets: [
        table("orders", [flow("ingest", landed), flow("backfill", later)]),
        table("orders_v2", [flow("fresh", later)]),
      ],
    },
  });
  const { update_id: updateId } = await cp.client.startUpdate(pipelineId);
  const update = await cp.client.waitForUpdate(pipelineId, updateId, { intervalMs: 200 });
  expect(update.state, update.error?.message).toBe("COMPLETED");
  const edit = (orders: unknown[], ordersV2: unknown[]) =>
    cp.client.editPipeline(pipelineId, {
      definition: { datasets: [table("orders", orders), table("orders_v2", ordersV2)] },
    });
  const warnings = async () =>
    (await cp.client.events(pipelineId, { filter: "event_type = 'warning'" })).events;

  // A flow added by an edit has not run: moving it loses nothing.
  await edit([flow("ingest", landed), flow("backfill", later)], [flow("fresh", later), flow("late", later)]);
  const unread = await edit(
    [flow("ingest", landed), flow("backfill", later), flow("late", later)],
    [flow("fresh", later)],
  );
  expect(unread.warnings).toBeUndefined();
  expect(await warnings()).toEqual([]);

  const moved = await edit(
    [flow("backfill", later), flow("late", later)],
    [flow("fresh", later), flow("ingest", landed)],
  );
  expect(moved.warnings).toEqual([
    expect.objectContaining({ flow: "ingest", from_dataset: "orders", to_dataset: "orders_v2" }),
  ]);
  const message = moved.warnings![0]!.message;
  expect(message).toContain('full_refresh_selection: ["orders_v2"]');
  expect(message).toContain('reset_checkpoint_selection: ["ingest"]');
  const events = await warnings();
  expect(events).toHaveLength(1);
  expect(events[0]).toMatchObject({
    level: "WARN",
    message,
    origin: { dataset_name: "orders_v2" },
    details: { flow_moved: { flow: "ingest", from_dataset: "orders", to_dataset: "orders_v2" } },
  });
});
