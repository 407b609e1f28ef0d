import { DatasetCatalog } from "../../shared/engine/dataset-catalog.ts";
import { captureRewindPoint, listRewindPoints } from "../../shared/rewind/rewind-points.ts";
import type { ObjectStore } from "../../shared/object-store/object-store.ts";
import { withPrefix } from "../../shared/object-store/prefixed-object-store.ts";
import { jsonLines, memoryPorts, RewindHarness } from "../support/rewind/rewind-harness.ts";
import { WallClock } from "./pipeline-tables.ts";

/**
 * A shared sink for other engines to read: one streaming table, `events`, appended to by two flows
 * that read the same landed files and each own their rows (`owns`, semantics.md "Refresh and
 * reset"), run on the production path with the bucket on `store`. Two good updates (a rewind point
 * after each), a bad deploy of one flow, a rewind of the table to the last good point (one RESTORE
 * for both writers), the fix deployed and a replay with one more file, then a full refresh of the
 * other flow alone (a DELETE of its rows, then its rows again): the log holds both flows' appends
 * with their txn markers, a RESTORE, appends after it, and a DELETE of one writer's rows.
 */

const CDF = { "delta.enableChangeDataFeed": "true" };
const REST_GOOD = "SELECT id, amount, region FROM source WHERE region <> 'eu'";
const REST_BAD = "SELECT id, amount * 3 AS amount, region FROM source WHERE region <> 'eu'";

function definition(landingUri: string, restSql: string) {
  const source = {
    type: "auto_loader",
    path: landingUri,
    format: "json",
    schema: { id: "BIGINT", amount: "BIGINT", region: "VARCHAR" },
  };
  return {
    name: "Interop shared sink",
    catalog: "main",
    schema: "interop_shared",
    configuration: { "pipelines.rewind.enabled": "true" },
    datasets: [
      {
        name: "events",
        type: "streaming_table",
        properties: CDF,
        flows: [
          {
            name: "eu_events",
            source,
            sql: "SELECT id, amount, region FROM source WHERE region = 'eu'",
            owns: "region = 'eu'",
          },
          { name: "other_events", source, sql: restSql, owns: "region <> 'eu'" },
        ],
      },
    ],
  };
}

/** Runs the shared sink's updates on `store`; answers its table's root (a key prefix of `store`). */
export async function writeSharedSinkTables(store: ObjectStore): Promise<Record<string, string>> {
  const h = new RewindHarness({
    clock: new WallClock(),
    ports: (clock) => ({ ...memoryPorts(clock), store, landing: withPrefix(store, "landing/") }),
  });
  await h.deploy(definition(h.landingUri, REST_GOOD));
  for (const i of [0, 1]) {
    await h.land(`batch-${i}.json`, jsonLines(1 + 6 * i, 6));
    await h.run();
    await captureRewindPoint(h.env(), "update-end");
  }
  const [lastGood] = await listRewindPoints(h.env()); // newest first
  await h.deploy(definition(h.landingUri, REST_BAD));
  await h.land("batch-2.json", jsonLines(13, 6));
  await h.run();
  await h.rewind({ rewind_point_id: lastGood!.rewindPointId });
  await h.deploy(definition(h.landingUri, REST_GOOD));
  await h.land("batch-3.json", jsonLines(19, 6));
  await h.run();
  await h.refresh({ full_refresh_selection: ["eu_events"] });
  return { events: new DatasetCatalog(h.pipeline, store).tablePrefix("events") };
}
