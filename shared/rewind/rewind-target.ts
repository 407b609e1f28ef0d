import { TableNotFoundError, TimestampOutOfRangeError, versionAtTimestamp } from "../delta/index.ts";
import { describeInterval } from "../pipeline/duration.ts";
import { BeyondRetentionError, type MissingPiece } from "./errors.ts";
import { cutOfDataset } from "./pipeline-cut.ts";
import { tableDatasets, writersOf } from "./pipeline-datasets.ts";
import type { RewindEnvironment } from "./rewind-environment.ts";
import type { PipelineCut } from "./rewind-point.ts";
import { findRewindPoint } from "./rewind-points.ts";
import type { RewindTarget } from "./rewind-spec.ts";
import { ROOT_SEQ } from "../store/checkpoints-repository.ts";
import { withTableSnapshots, type TableSnapshots } from "./table-snapshots.ts";

/**
 * Resolving a rewind target to a cut (semantics.md "Rewind request"):
 * - a `rewind_point_id` is looked up among the live points (`REWIND_POINT_NOT_FOUND` otherwise) and
 *   gives its recorded cut exactly;
 * - a `rewind_timestamp` T older than the rewind retention is `BEYOND_RETENTION`; otherwise each
 *   dataset resolves to its latest table version committed at or before T (a commit exactly at T is
 *   included, so the result is deterministic), and each flow to the checkpoint that version holds
 *   (see `pipeline-cut.ts`). Causal commit timestamps make these per-table choices one consistent cut.
 *   A table whose log no longer reaches back to T is `BEYOND_RETENTION`; one created after T is simply
 *   absent from the cut.
 */

export interface ResolvedTarget {
  readonly target: RewindTarget;
  readonly rewindPointId?: string;
  readonly cut: PipelineCut;
}

export async function resolveTarget(
  env: RewindEnvironment,
  target: RewindTarget,
  snapshots?: TableSnapshots,
): Promise<ResolvedTarget> {
  if (target.kind === "point") {
    const point = await findRewindPoint(env, target.rewindPointId);
    return { target, rewindPointId: point.rewindPointId, cut: point.cut };
  }
  const now = env.clock();
  const retention = env.pipeline.settings.rewindRetentionMs;
  if (target.time < now - retention) {
    throw new BeyondRetentionError(
      [],
      `rewind_timestamp ${target.text} is older than the pipeline's rewind retention of ${describeInterval(retention)}`,
    );
  }
  return { target, cut: await cutAtTime(env, target.time, snapshots) };
}

/** The cut at instant `time` (reading through `snapshots` when given). */
export async function cutAtTime(
  env: RewindEnvironment,
  time: number,
  snapshots?: TableSnapshots,
): Promise<PipelineCut> {
  if (!snapshots) return withTableSnapshots(env.tableStore, (own) => cutAtTime(env, time, own));
  const datasets = new Map<string, { version: number; tableId: string }>();
  const flows = new Map<string, number>();
  const missing: MissingPiece[] = [];
  for (const dataset of tableDatasets(env.pipeline)) {
    const version = await versionAt(env, dataset, time, missing);
    const at =
      version === undefined
        ? undefined
        : await cutOfDataset(env, snapshots, dataset, { kind: "version", version });
    if (at) datasets.set(dataset, { version: at.version, tableId: at.tableId });
    for (const flow of writersOf(env.pipeline, dataset))
      flows.set(flow.name, at?.flows.get(flow.name) ?? ROOT_SEQ);
  }
  if (missing.length > 0) throw new BeyondRetentionError(missing);
  return { time, datasets, flows };
}

async function versionAt(
  env: RewindEnvironment,
  dataset: string,
  time: number,
  missing: MissingPiece[],
): Promise<number | undefined> {
  try {
    return await versionAtTimestamp(env.tableStore(dataset), time);
  } catch (error) {
    if (error instanceof TableNotFoundError) return undefined;
    if (error instanceof TimestampOutOfRangeError) {
      // Before version 0: the table did not exist yet. Before a later earliest version: the log
      // entries that reached back to T were cleaned up.
      if (error.earliest && error.earliest.version > 0) {
        missing.push({
          owner: dataset,
          what: `table history before version ${error.earliest.version} (${new Date(error.earliest.timestamp).toISOString()}) is no longer in the log`,
        });
      }
      return undefined;
    }
    throw error;
  }
}
