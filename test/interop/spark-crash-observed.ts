import { readFlowState } from "../../shared/control/flow-states/flow-state-reads.ts";
import { currentSnapshot, DeltaTable } from "../../shared/delta/index.ts";
import { DatasetCatalog } from "../../shared/engine/dataset-catalog.ts";
import { viewStateAt } from "../../shared/engine/incremental-view.ts";
import { viewStateFlowId } from "../../shared/engine/materialized-view.ts";
import { Sandbox } from "../../shared/engine/sandbox.ts";
import { listAllKeys } from "../../shared/object-store/object-store.ts";
import type { ValidatedPipeline } from "../../shared/pipeline/validate-pipeline.ts";
import { liveStateFiles } from "../../shared/state/state-vacuum.ts";
import { openStateVersion } from "../../shared/state/index.ts";
import { flowStatePrefix } from "../../shared/store/bucket-layout.ts";
import type { EngineHarness } from "../integration/engine/engine-harness.ts";
import { STATEFUL_FLOWS, TABLES, VIEW } from "./spark-crash-pipeline.ts";

/**
 * What spark-crash.test.ts compares with the DuckDB-only run after each step, and the files a dead
 * attempt may leave (what VACUUM must remove): read from the harness's bucket, never through the engine.
 */

/**
 * Values as text: a view's `sum` of a BIGINT column is a BIGINT written by Spark but a wider number
 * written by DuckDB (the values agree; the column types differ).
 */
const json = (value: unknown) =>
  JSON.stringify(value, (_, v: unknown) => (typeof v === "bigint" || typeof v === "number" ? String(v) : v));

export type Observed = Awaited<ReturnType<typeof observed>>;

/** Every table's rows, the stateful flows' state at HEAD (without its ids) and the view's partials. */
export async function observed(harness: EngineHarness, pipeline: ValidatedPipeline) {
  const tables: Record<string, string[]> = {};
  for (const table of TABLES) tables[table] = (await harness.rows(pipeline, table)).map(json).sort();
  const state: Record<string, unknown> = {};
  for (const flow of Object.keys(STATEFUL_FLOWS)) {
    const {
      pipeline_id: _,
      state_version: __,
      ...read
    } = await readFlowState(harness.plane, harness.pipelineId, flow, { max_results: 10_000 });
    state[flow] = read;
  }
  return { tables, state, partials: await viewPartials(harness, pipeline) };
}

/** The view's partials: the state version its table names, read back as rows, buckets and meaning. */
async function viewPartials(harness: EngineHarness, pipeline: ValidatedPipeline) {
  const viewStore = new DatasetCatalog(pipeline, harness.store).tableStore(VIEW);
  const key = await viewStateAt(viewStore, (await currentSnapshot(viewStore)).version);
  const flow = { pipelineId: harness.pipelineId, flowId: viewStateFlowId(VIEW) };
  const version = await openStateVersion({ store: harness.store, flow, version: key });
  const stored = version.manifest.tables["groups"];
  if (!stored) return { meaning: version.meta["view"], stored: null, rows: [] };
  const sandbox = await Sandbox.open();
  try {
    await version.table("groups", stored.schema).loadAll(sandbox, "__partials");
    const rows = await sandbox.rows("SELECT * FROM __partials ORDER BY ALL");
    return {
      meaning: version.meta["view"],
      stored: {
        schema: stored.schema,
        hash: stored.hash,
        buckets: stored.buckets,
        // Which bucket holds how many keys: the bucket hash of both engines, compared.
        parts: Object.fromEntries(Object.entries(stored.parts).map(([b, part]) => [b, part.rows])),
      },
      rows: JSON.parse(json(rows)) as unknown,
    };
  } finally {
    await sandbox.close();
  }
}

/** Keys under the table's Spark staging folders, and those its latest version does not reference. */
export async function staging(harness: EngineHarness, pipeline: ValidatedPipeline, dataset: string) {
  const store = new DatasetCatalog(pipeline, harness.store).tableStore(dataset);
  const table = await DeltaTable.open(store);
  try {
    const keys = (await listAllKeys(store, "spark/")).map((object) => object.key);
    const referenced = new Set(table.snapshot.files.keys());
    return { keys, orphans: keys.filter((key) => !referenced.has(key)) };
  } finally {
    await table.close();
  }
}

/** Keys left in the pipeline's Spark job folders (requests, manifests, state staging). */
export async function jobKeys(harness: EngineHarness): Promise<string[]> {
  return (await listAllKeys(harness.store, `state/${harness.pipelineId}/spark-jobs/`)).map((o) => o.key);
}

/**
 * The state files of the flow writing `dataset` (or of the view), and those no live state version
 * lists (a dead attempt's): a flow's live versions are those its committed checkpoints name, the
 * view's the one its latest commit names.
 */
export async function stateFiles(harness: EngineHarness, pipeline: ValidatedPipeline, dataset: string) {
  const flowId =
    dataset === VIEW
      ? viewStateFlowId(VIEW)
      : Object.entries(STATEFUL_FLOWS).find(([, written]) => written === dataset)?.[0];
  if (!flowId) return undefined;
  const versions: string[] = [];
  if (dataset === VIEW) {
    const viewStore = new DatasetCatalog(pipeline, harness.store).tableStore(VIEW);
    const key = await viewStateAt(viewStore, (await currentSnapshot(viewStore)).version);
    if (key) versions.push(key);
  } else {
    const ref = { pipelineId: harness.pipelineId, flowId };
    const head = (await harness.plane.checkpoints.head(ref)).seq;
    for (let seq = 1; seq <= head; seq++) {
      // The operator's state version, and the auto_loader's file set (`stateRef`).
      const checkpoint = await harness.plane.checkpoints.get(ref, seq);
      for (const key of [checkpoint?.stateVersion, checkpoint?.stateRef]) if (key) versions.push(key);
    }
  }
  const live = await liveStateFiles(harness.store, versions);
  const keys = (await listAllKeys(harness.store, flowStatePrefix(harness.pipelineId, flowId))).map(
    (o) => o.key,
  );
  return { keys, orphans: keys.filter((key) => !live.has(key)) };
}
