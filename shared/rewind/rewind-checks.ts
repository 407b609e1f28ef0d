import {
  findMissingFiles,
  loadSnapshot,
  planRestore,
  TableNotFoundError,
  VersionNotFoundError,
} from "../delta/index.ts";
import { CheckpointStateError } from "../engine/errors.ts";
import { FileSetState } from "../engine/file-set-state.ts";
import { checkStateOf } from "../engine/stateful/state-compatibility.ts";
import { isStatefulFlow } from "../engine/stateful/stateful-batch.ts";
import { stateDefinitionDrift, type StateDefinitionDrift } from "../engine/stateful/state-definition.ts";
import { CdcStateCheck } from "../engine/auto-cdc/cdc-compatibility.ts";
import { ROOT_SEQ, type Checkpoint } from "../store/checkpoints-repository.ts";
import {
  fileSetOffsetOf,
  joinedOffsetOf,
  sourceOffsetOf,
  stateFilesOf,
  tableOffsetOf,
} from "./checkpoint-offsets.ts";
import {
  BeyondRetentionError,
  CheckpointBeyondRetentionError,
  IncompatibleRestoredStateError,
  type MissingPiece,
} from "./errors.ts";
import { kafkaRetentionGaps, kinesisRetentionGaps } from "./event-stream-retention.ts";
import { writersOf } from "./pipeline-datasets.ts";
import { flowRef, type RewindEnvironment } from "./rewind-environment.ts";
import type { TableSnapshots } from "./table-snapshots.ts";

/**
 * The checks a rewind (and its dry run) makes against storage before anything changes (semantics.md
 * "Rewind request": files, checkpoints, state or source data gone; "Replay": the current definition
 * must be compatible with the restored state). Every problem of a kind is collected so the error
 * names all missing pieces at once.
 *
 * 1. Table data: the target version is still in the log, and every data file it needs exists (`head`).
 * 2. Checkpoints (flows with reset_checkpoints): the target checkpoint exists and is COMMITTED, and
 *    its state files exist.
 * 3. Source data: an auto_loader flow must find again every file it processed after the target (they
 *    are replayed); a delta-path flow needs its source's log from its target offset on; a kafka or
 *    kinesis flow needs its stream to still hold the target's positions (`event-stream-retention.ts`).
 * 4. Compatibility: the restored offset must be of the kind the flow's current source reads, a
 *    `stream` offset must name the table its upstream will hold after the rewind, and the restored
 *    operator state (an AUTO CDC flow's per-key state) must fit the current definition. A state
 *    that fits but was built under another definition of the flow's query (a filter added) is
 *    allowed, and reported (`state-definition.ts`).
 */

export interface DatasetCheck {
  readonly dataset: string;
  /** The current version when checked. */
  readonly currentVersion: number;
}

export interface FlowCheck {
  readonly flow: string;
  readonly dataset: string;
  readonly targetSeq: number;
  readonly currentSeq: number;
}

/** Step 1 for one dataset: the version it was checked at, or the pieces missing. */
export async function checkTable(
  env: RewindEnvironment,
  snapshots: TableSnapshots,
  dataset: string,
  targetVersion: number,
  missing: MissingPiece[],
): Promise<DatasetCheck | undefined> {
  const current = await snapshots.latest(dataset);
  let target;
  try {
    target = await snapshots.at(dataset, targetVersion);
  } catch (error) {
    if (error instanceof VersionNotFoundError || error instanceof TableNotFoundError) {
      missing.push({ owner: dataset, what: `table version ${targetVersion} is no longer in the log` });
      return undefined;
    }
    throw error;
  }
  if (!current) {
    missing.push({ owner: dataset, what: "the table no longer exists" });
    return undefined;
  }
  const restore = planRestore(current, target, env.clock());
  for (const key of await findMissingFiles(env.tableStore(dataset), restore.filesToRestore)) {
    missing.push({
      owner: dataset,
      what: `data file ${key} of version ${targetVersion} is gone (vacuumed?)`,
    });
  }
  return { dataset, currentVersion: current.version };
}

/** Steps 2–4 for the flows writing a dataset whose checkpoints are reset. */
export async function checkFlows(
  env: RewindEnvironment,
  dataset: string,
  targetSeqs: ReadonlyMap<string, number>,
  missing: { checkpoints: MissingPiece[]; sources: MissingPiece[] },
  /** The id of the table a `stream` source will read after the rewind (undefined: none yet). */
  upstreamTableId: (dataset: string) => Promise<string | undefined> = async () => undefined,
  /** Receives each restored state built under another definition of its flow (allowed; said). */
  drifts: StateDefinitionDrift[] = [],
): Promise<FlowCheck[]> {
  const checks: FlowCheck[] = [];
  for (const flow of writersOf(env.pipeline, dataset)) {
    const ref = flowRef(env, flow.name);
    const targetSeq = targetSeqs.get(flow.name) ?? ROOT_SEQ;
    const head = await env.checkpoints.head(ref);
    checks.push({ flow: flow.name, dataset, targetSeq, currentSeq: head.seq });
    if (targetSeq === ROOT_SEQ) continue;
    const checkpoint = await env.checkpoints.get(ref, targetSeq);
    if (!checkpoint || checkpoint.status !== "COMMITTED") {
      missing.checkpoints.push({
        owner: flow.name,
        what: `checkpoint ${targetSeq} is ${checkpoint ? "not committed" : "gone"}`,
      });
      continue;
    }
    for (const key of stateFilesOf(checkpoint)) {
      if ((await env.stateStore.head(key)) === undefined) {
        missing.checkpoints.push({
          owner: flow.name,
          what: `state file ${key} of checkpoint ${targetSeq} is gone`,
        });
      }
    }
    checkCompatibility(flow.name, flow.source.type, checkpoint);
    if (missing.checkpoints.length === 0) {
      await checkStateOf(env.stateStore, ref, flow, checkpoint, env.pipeline);
      if (isStatefulFlow(flow)) {
        const drift = await stateDefinitionDrift(env.stateStore, ref, flow, checkpoint);
        if (drift) drifts.push(drift);
      }
      const cdc = new CdcStateCheck(env.pipeline, env.stateStore, false);
      try {
        await cdc.check(env.pipelineId, dataset, flow, checkpoint);
      } finally {
        await cdc.close();
      }
    }
    const streamed = [
      ...(flow.source.type === "stream"
        ? [{ upstream: flow.source.dataset, offset: tableOffsetOf(checkpoint) }]
        : []),
      ...(flow.join ? [{ upstream: flow.join.stream, offset: joinedOffsetOf(checkpoint) }] : []),
    ];
    for (const { upstream, offset } of streamed) {
      const upstreamId = await upstreamTableId(upstream);
      if (offset && upstreamId !== undefined && offset.tableId !== upstreamId) {
        throw new IncompatibleRestoredStateError(
          flow.name,
          `its checkpoint ${checkpoint.seq} read a table ${upstream} that has been dropped and recreated since (a full refresh); rewind ${upstream} too`,
        );
      }
    }
    if (flow.source.type === "auto_loader") {
      await checkReplayedFiles(
        env,
        flow.name,
        flow.source.path,
        checkpoint,
        head.checkpoint,
        missing.sources,
      );
    } else if (flow.source.type === "delta") {
      await checkDeltaSource(env, flow.name, flow.source.path, checkpoint, missing.sources);
    } else if (flow.source.type === "kafka" || flow.source.type === "kinesis") {
      const streams = env.eventStreams;
      const offset = sourceOffsetOf(checkpoint);
      if (flow.source.type === "kafka" && offset?.kind === "kafka") {
        missing.sources.push(...(await kafkaRetentionGaps(streams, flow.name, flow.source, offset)));
      } else if (flow.source.type === "kinesis" && offset?.kind === "kinesis") {
        const at = checkpoint.committedAt ?? checkpoint.plannedAt;
        missing.sources.push(
          ...(await kinesisRetentionGaps(streams, flow.name, flow.source, offset, at, env.clock())),
        );
      }
    }
  }
  return checks;
}

/** Throws the two kinds of missing pieces, checkpoints first (the more specific error). */
export function throwIfMissing(
  tables: MissingPiece[],
  checkpoints: MissingPiece[],
  sources: MissingPiece[],
): void {
  if (checkpoints.length > 0) throw new CheckpointBeyondRetentionError(checkpoints);
  if (tables.length > 0 || sources.length > 0) throw new BeyondRetentionError([...tables, ...sources]);
}

/** The offset kind each source type keeps. */
const OFFSET_KIND = {
  stream: "table",
  delta: "table",
  auto_loader: "files",
  kafka: "kafka",
  kinesis: "kinesis",
} as const;

const OFFSET_NAME = {
  table: "a table version offset",
  files: "a file-set offset",
  kafka: "Kafka partition offsets",
  kinesis: "Kinesis shard positions",
} as const;

function checkCompatibility(
  flow: string,
  sourceType: keyof typeof OFFSET_KIND,
  checkpoint: Checkpoint,
): void {
  const offset = sourceOffsetOf(checkpoint);
  if (offset && offset.kind !== OFFSET_KIND[sourceType]) {
    throw new IncompatibleRestoredStateError(
      flow,
      `its checkpoint ${checkpoint.seq} holds ${OFFSET_NAME[offset.kind]}, but the flow now reads a ${sourceType} source`,
    );
  }
}

async function checkReplayedFiles(
  env: RewindEnvironment,
  flow: string,
  path: string,
  target: Checkpoint,
  head: Checkpoint | undefined,
  missing: MissingPiece[],
): Promise<void> {
  const headOffset = fileSetOffsetOf(head);
  if (!headOffset) return;
  const state = new FileSetState(env.stateStore, env.pipelineId, flow);
  let before: Set<string>;
  let now: Set<string>;
  try {
    [before, now] = await Promise.all([state.load(fileSetOffsetOf(target)), state.load(headOffset)]);
  } catch (error) {
    if (error instanceof CheckpointStateError) return; // a missing state file: reported by the checkpoint check
    throw error;
  }
  const source = env.sourceStore(path);
  for (const key of [...now].filter((key) => !before.has(key)).sort()) {
    if ((await source.head(key)) === undefined) {
      missing.push({ owner: flow, what: `source file ${key} under ${path}, to be replayed, is gone` });
    }
  }
}

async function checkDeltaSource(
  env: RewindEnvironment,
  flow: string,
  path: string,
  target: Checkpoint,
  missing: MissingPiece[],
): Promise<void> {
  const offset = tableOffsetOf(target);
  if (!offset) return;
  try {
    const latest = await loadSnapshot(env.sourceStore(path));
    if (offset.nextVersion <= latest.version)
      await loadSnapshot(env.sourceStore(path), { version: offset.nextVersion });
  } catch (error) {
    if (!(error instanceof VersionNotFoundError || error instanceof TableNotFoundError)) throw error;
    missing.push({
      owner: flow,
      what: `version ${offset.nextVersion} of the source table ${path} is no longer readable`,
    });
  }
}
