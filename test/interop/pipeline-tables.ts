import { parseWith } from "../../shared/api/request-body.ts";
import { startUpdateBody } from "../../shared/api/request-schemas.ts";
import { startUpdateOrBranch } from "../../shared/control/branches/branch-request.ts";
import { publishBranch } from "../../shared/control/branches/publish-branch.ts";
import { DatasetCatalog } from "../../shared/engine/dataset-catalog.ts";
import { captureRewindPoint, listRewindPoints } from "../../shared/rewind/rewind-points.ts";
import type { ObjectStore } from "../../shared/object-store/object-store.ts";
import { withPrefix } from "../../shared/object-store/prefixed-object-store.ts";
import { memoryPorts, RewindHarness, TestClock } from "../support/rewind/rewind-harness.ts";

/**
 * The tables a whole pipeline writes across a rewind and replay, for other engines to read: files
 * land → `raw` (auto_loader) → `cleaned` (a streaming table reading `raw` as a stream) → `totals` (a
 * materialized view), run on the production path (start-update and the control-plane steps) with
 * the bucket on `store`. Two good updates (a rewind point after each), a bad deploy's update, a
 * rewind to the last good point (each table RESTOREd), the fix deployed and a replay with one more
 * file: every table's log then holds appends, a RESTORE, and the replay's appends after it. `raw`
 * and `cleaned` carry a nested column (struct, array, map) from the landed JSON.
 */

export const PIPELINE_DATASETS = ["raw", "cleaned", "totals"] as const;

const CDF = { "delta.enableChangeDataFeed": "true" };
const GOOD_SQL = "SELECT id, amount * 2 AS amount2, region, detail FROM source";
const BAD_SQL = "SELECT id, amount * 3 AS amount2, region, detail FROM source";
/** A nested column (struct of a list, a struct and a map), as a JSON payload lands: Delta's struct, array and map. */
const DETAIL = "STRUCT(tags VARCHAR[], spot STRUCT(x BIGINT, y DOUBLE), attrs MAP(VARCHAR, BIGINT))";

function definition(landingUri: string, cleanedSql: string) {
  return {
    name: "Interop pipeline",
    catalog: "main",
    schema: "interop",
    configuration: { "pipelines.rewind.enabled": "true" },
    datasets: [
      {
        name: "raw",
        type: "streaming_table",
        properties: CDF,
        flows: [
          {
            name: "ingest",
            source: {
              type: "auto_loader",
              path: landingUri,
              format: "json",
              schema: { id: "BIGINT", amount: "BIGINT", region: "VARCHAR", detail: DETAIL },
            },
            sql: "SELECT id, amount, region, detail FROM source",
          },
        ],
      },
      {
        name: "cleaned",
        type: "streaming_table",
        properties: CDF,
        flows: [{ name: "clean", source: { type: "stream", dataset: "raw" }, sql: cleanedSql }],
      },
      {
        name: "totals",
        type: "materialized_view",
        properties: CDF,
        sql: "SELECT region, sum(amount2) AS total, count(*) AS n FROM cleaned GROUP BY region",
      },
    ],
  };
}

/** Rows `from..from+n` as JSON lines, `detail` empty, NULL or filled by turns. */
function lines(from: number, n: number): string {
  const regions = ["eu", "us", "apac"];
  const detail = (id: number) =>
    id % 3 === 0
      ? null
      : { tags: id % 3 === 1 ? [] : [`t${id}`, "x"], spot: { x: id, y: id / 4 }, attrs: { [`k${id}`]: id } };
  return (
    Array.from({ length: n }, (_, i) => {
      const id = from + i;
      return JSON.stringify({ id, amount: id * 10, region: regions[id % 3], detail: detail(id) });
    }).join("\n") + "\n"
  );
}

/**
 * Wall time, strictly increasing: Spark dates a commit by its log file's modification time, so the
 * commits' own timestamps must be near it.
 */
export class WallClock extends TestClock {
  #last = 0;
  override readonly now = (): number => (this.#last = Math.max(Date.now(), this.#last + 1));
}

/**
 * Runs the pipeline on `store`; answers each dataset's table root (a key prefix of `store`). With
 * `publish`, the bad deploy is undone by a branch at the last good point, published (one RESTORE
 * per table, docs/branches.md), instead of a rewind.
 */
export async function writePipelineTables(
  store: ObjectStore,
  options: { readonly publish?: boolean } = {},
): Promise<Record<string, string>> {
  const h = new RewindHarness({
    clock: new WallClock(),
    ports: (clock) => ({ ...memoryPorts(clock), store, landing: withPrefix(store, "landing/") }),
  });
  await h.deploy(definition(h.landingUri, GOOD_SQL));
  for (const i of [0, 1]) {
    await h.land(`batch-${i}.json`, lines(1 + 5 * i, 5));
    await h.run();
    await captureRewindPoint(h.env(), "update-end");
  }
  const [lastGood] = await listRewindPoints(h.env()); // newest first
  await h.deploy(definition(h.landingUri, BAD_SQL));
  await h.land("batch-2.json", lines(11, 5));
  await h.run();
  if (options.publish) {
    await startUpdateOrBranch(
      h.plane,
      h.pipelineId,
      parseWith(startUpdateBody, {
        rewind_spec: { rewind_point_id: lastGood!.rewindPointId, branch: "fix" },
      }),
    );
    const { update_id } = await publishBranch(h.plane, h.pipelineId, "fix");
    const published = await h.executions.settled(update_id);
    if (published.state !== "COMPLETED") throw published.error ?? new Error(`publish ${published.state}`);
  } else await h.rewind({ rewind_point_id: lastGood!.rewindPointId });
  await h.deploy(definition(h.landingUri, GOOD_SQL));
  await h.land("batch-3.json", lines(16, 5));
  await h.run();
  const catalog = new DatasetCatalog(h.pipeline, store);
  return Object.fromEntries(PIPELINE_DATASETS.map((dataset) => [dataset, catalog.tablePrefix(dataset)]));
}
