import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { loadSynthesizedEbb } from "../infra/local/ebb-synthesis-cache.ts";
import { startEmbeddedEbb } from "../infra/local/embedded-ebb.ts";
import { startLocalControlPlane } from "../infra/local/local-control-plane.ts";
import { formatTable } from "../shared/cli/output-format.ts";
import { EbbClient } from "../shared/client/ebb-client.ts";
import { bearerAuth } from "../shared/client/request-signer.ts";
import { readDefinitionText } from "../shared/pipeline/parse-definition.ts";

/**
 * `npm run demo`: Ebb's main job, end to end, on the embedded runtime and only through its HTTP API.
 *
 * 1. Create the orders pipeline (examples/orders/pipeline.yaml), land a day of orders, run it.
 * 2. A bad deploy (amounts in cents reported as euros), more orders land, the run writes wrong revenue.
 * 3. Find where it went wrong (onset), rehearse the rewind (dry run), rewind to the point before it.
 * 4. Deploy the fix and replay: only the affected orders are reprocessed, none skipped or doubled.
 */

const HERE = path.dirname(fileURLToPath(import.meta.url));
const say = (text: string) => console.log(`\n== ${text}`);

const landing = await mkdtemp(path.join(os.tmpdir(), "ebb-demo-landing-"));
const definition = async (file: string) => {
  const text = (await readFile(path.join(HERE, "orders", file), "utf8")).replaceAll("${LANDING}", landing);
  const { datasets, ...settings } = readDefinitionText(text) as { datasets: unknown[] };
  return { ...settings, definition: { datasets } };
};
const land = (file: string, orders: readonly [number, number, string][]) =>
  writeFile(
    path.join(landing, file),
    orders.map(([id, amount_cents, region]) => JSON.stringify({ id, amount_cents, region })).join("\n") +
      "\n",
  );

say("starting Ebb on this machine (embedded S3, DynamoDB, Step Functions, API)");
const { aws, storage } = await startEmbeddedEbb({ dataDir: "memory" });
const plane = await startLocalControlPlane({
  endpoints: aws.endpoints,
  storage,
  ebb: await loadSynthesizedEbb(),
  schedules: false,
  localRoots: [landing],
});
const ebb = new EbbClient({ endpoint: plane.endpoint, auth: bearerAuth(plane.token) });

try {
  const run = async (label: string, body?: unknown) => {
    const { update_id } = await ebb.startUpdate(pipelineId, body);
    const update = await ebb.waitForUpdate(pipelineId, update_id, { intervalMs: 250 });
    const flows = Object.entries(update.progress ?? {}).map(([flow, p]) => `${flow}: ${p.rows_out} rows`);
    console.log(
      `${label}: update ${update_id} ${update.state}${flows.length ? ` (${flows.join(", ")})` : ""}`,
    );
    if (update.state !== "COMPLETED")
      throw new Error(`${label} ended ${update.state}: ${update.error?.message ?? ""}`);
    return update;
  };
  const show = async (table: string) => {
    const { version, rows } = await ebb.query(`demo.sales.${table}`, { sql: "SELECT * FROM t ORDER BY 1" });
    console.log(`demo.sales.${table} (version ${version}):\n${formatTable(rows)}`);
  };

  say("1. create the pipeline, land the first orders, run");
  const { pipeline_id: pipelineId } = await ebb.createPipeline(await definition("pipeline.yaml"));
  await land("day-1.json", [
    [1, 1250, "eu"],
    [2, 4000, "us"],
    [3, 999, "eu"],
  ]);
  await run("first run");
  await show("revenue_by_region");
  const [point] = (await ebb.rewindPoints(pipelineId)).rewind_points;
  console.log(`rewind point ${point!.rewind_point_id} captured at ${point!.timestamp}`);
  await new Promise((resolve) => setTimeout(resolve, 2000)); // whole seconds between good and bad commits

  say("2. a bad deploy: cents reported as euros; more orders land; the run writes wrong revenue");
  await ebb.editPipeline(pipelineId, await definition("pipeline-bad-deploy.yaml"));
  await land("day-2.json", [
    [4, 2000, "us"],
    [5, 500, "apac"],
  ]);
  await run("run with the bad code");
  await show("revenue_by_region");

  say("3. find the onset, rehearse the rewind, rewind");
  const onset = await ebb.onset("demo.sales.orders", { predicate: "amount >= 100" }); // no order is that large
  console.log(
    `first bad version ${String(onset["first_bad_version"])} at ${String(onset["first_bad_commit_time"])}; midpoint ${String(onset["rewind_timestamp"])}`,
  );
  const spec = {
    rewind_point_id: point!.rewind_point_id,
    datasets: [{ identifier: "demo.sales.raw_orders", cascade: true, reset_checkpoints: true }],
  };
  await run("dry run", { cause: "USER_ACTION", rewind_spec: { ...spec, dry_run: true } });
  await run("rewind", { cause: "USER_ACTION", rewind_spec: { ...spec, dry_run: false } });
  await show("revenue_by_region");

  say("4. deploy the fix and replay (an update with no rewind_spec)");
  await ebb.editPipeline(pipelineId, await definition("pipeline.yaml"));
  await run("replay");
  await show("orders");
  await show("revenue_by_region");
  const history = (await ebb.history("demo.sales.orders")).history.map((entry) => ({
    version: entry["version"],
    operation: entry["operation"],
    timestamp: entry["timestamp"],
  }));
  console.log(`history of demo.sales.orders:\n${formatTable(history)}`);
  say("done: day 2 was reprocessed with the fix; nothing was skipped or written twice");
} finally {
  await plane.stop();
  await aws.stop();
  await rm(landing, { recursive: true, force: true });
}
