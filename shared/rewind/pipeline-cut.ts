import { readCommit, type Snapshot } from "../delta/index.ts";
import { ROOT_SEQ } from "../store/checkpoints-repository.ts";
import type { ObjectStore } from "../object-store/object-store.ts";
import { flowAppId } from "../store/checkpoints-repository.ts";
import { flowRef, type RewindEnvironment } from "./rewind-environment.ts";
import { tableDatasets, writersOf } from "./pipeline-datasets.ts";
import type { PipelineCut } from "./rewind-point.ts";
import { withTableSnapshots, type TableSnapshots } from "./table-snapshots.ts";

/**
 * A consistent cut of the pipeline (semantics.md "Rewind points": a capture during a running update
 * is still consistent). The flows' positions are read from the tables themselves: a flow stamps each
 * commit with `txn {appId: <pipelineId>/<flow>, version: seq}`, and RESTORE sets txns back, so the
 * txn in a table version names exactly the last batch that version holds — on whatever timeline.
 *
 * 1. Read datasets downstream first: a reader's table is read before the tables it reads, so whatever
 *    it has consumed is already in the upstream version read after it.
 * 2. Per table, take its latest version (or the one at a given version / timestamp).
 * 3. Per writing flow, its seq is the txn version in that table version (the root, 0, when absent).
 * 4. A seq whose checkpoint is still PLANNED is a batch caught between its table commit and its
 *    checkpoint commit (architecture.md "Streaming", steps 4–5): step the table back to the version
 *    before that commit and repeat 3, so the cut holds only batches whose checkpoints are COMMITTED.
 */

export type VersionChoice =
  { readonly kind: "latest" } | { readonly kind: "version"; readonly version: number };

/** Where one dataset and its writers stand in the cut; undefined when its table does not exist. */
export interface DatasetCut {
  readonly version: number;
  readonly tableId: string;
  readonly timestamp: number;
  readonly flows: ReadonlyMap<string, number>;
}

/** Captures the pipeline's current cut (step 1 over every table), reported in run order. */
export async function captureCut(env: RewindEnvironment): Promise<PipelineCut> {
  const time = env.clock();
  const order = tableDatasets(env.pipeline);
  const read = new Map<string, DatasetCut | undefined>();
  await withTableSnapshots(env.tableStore, async (snapshots) => {
    for (const dataset of [...order].reverse()) {
      read.set(dataset, await cutOfDataset(env, snapshots, dataset, { kind: "latest" }));
    }
  });
  const datasets = new Map<string, { version: number; tableId: string }>();
  const flows = new Map<string, number>();
  for (const dataset of order) {
    const at = read.get(dataset);
    if (at) datasets.set(dataset, { version: at.version, tableId: at.tableId });
    for (const flow of writersOf(env.pipeline, dataset))
      flows.set(flow.name, at?.flows.get(flow.name) ?? ROOT_SEQ);
  }
  return { time, datasets, flows };
}

/** Steps 2–4 for one dataset. */
export async function cutOfDataset(
  env: RewindEnvironment,
  snapshots: TableSnapshots,
  dataset: string,
  choice: VersionChoice,
): Promise<DatasetCut | undefined> {
  const store = env.tableStore(dataset);
  const first =
    choice.kind === "version" ? await snapshots.at(dataset, choice.version) : await snapshots.latest(dataset);
  if (!first) return undefined;
  let snapshot: Snapshot = first;
  const writers = writersOf(env.pipeline, dataset).map((flow) => flow.name);
  for (;;) {
    const flows = new Map(writers.map((flow) => [flow, seqIn(snapshot, env.pipelineId, flow)]));
    const inFlight = await firstUncommitted(env, flows);
    if (inFlight === undefined) {
      return {
        version: snapshot.version,
        tableId: snapshot.metadata.id,
        timestamp: snapshot.timestamp,
        flows,
      };
    }
    const before = await versionBeforeBatch(
      store,
      snapshot.version,
      flowAppId(flowRef(env, inFlight.flow)),
      inFlight.seq,
    );
    if (before < 0) return undefined;
    snapshot = await snapshots.at(dataset, before);
  }
}

/** The seq of the flow's last batch in `snapshot`: its txn version, or the root. */
export function seqIn(snapshot: Snapshot, pipelineId: string, flow: string): number {
  const version = snapshot.txns.get(flowAppId({ pipelineId, flowId: flow }))?.version;
  return version === undefined || version < 0 ? ROOT_SEQ : version;
}

async function firstUncommitted(
  env: RewindEnvironment,
  flows: ReadonlyMap<string, number>,
): Promise<{ flow: string; seq: number } | undefined> {
  for (const [flow, seq] of flows) {
    if (seq === ROOT_SEQ) continue;
    const checkpoint = await env.checkpoints.get(flowRef(env, flow), seq);
    if (checkpoint?.status === "PLANNED") return { flow, seq };
  }
  return undefined;
}

/** The version just before the commit (at or below `from`) that stamped `appId` with `seq`. */
async function versionBeforeBatch(
  store: ObjectStore,
  from: number,
  appId: string,
  seq: number,
): Promise<number> {
  for (let version = from; version >= 0; version--) {
    const actions = await readCommit(store, version);
    if (
      actions.some((action) => "txn" in action && action.txn.appId === appId && action.txn.version === seq)
    ) {
      return version - 1;
    }
  }
  return -1;
}
