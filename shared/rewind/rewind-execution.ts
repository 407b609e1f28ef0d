import { executeRestore, planRestore, TableNotFoundError } from "../delta/index.ts";
import { fencedOut } from "../engine/errors.ts";
import { ConcurrentRewindChangeError } from "./errors.ts";
import { flowRef, tableWriteFence, type RewindEnvironment } from "./rewind-environment.ts";
import { appendEvent, EVENT_TYPES } from "./rewind-events.ts";
import { rewindSummaryEvent, type PipelineCut } from "./rewind-point.ts";
import type { DatasetRewind } from "./rewind-plan.ts";
import { resetTable } from "./dataset-reset.ts";
import { withTableSnapshots, type TableSnapshots } from "./table-snapshots.ts";

/**
 * Doing a planned rewind (semantics.md "Doing the rewind"), as the state machine's steps run it. Every
 * step is idempotent, so a task retried after a crash, or a second rewind after a failed one,
 * converges on the target. Before these, start-update has planned the rewind (rewind-plan.ts, every
 * check) and the Plan step has recorded a dry run's point (and stopped there), or marked the pipeline
 * rewind-blocked (write-ahead: a crash at any later step leaves it blocked, and non-rewind updates
 * fail with PIPELINE_REWIND_INCOMPLETE until a rewind succeeds).
 *
 * 1. For each dataset, upstream first (one RewindDataset task each, wave by wave):
 *    a. plan the RESTORE against the table as it is now; a table that already holds the target's
 *       files, metadata and txns is not restored again (a re-run after a crash). Its files are not
 *       checked again while the table is still at the version the planning checked them at;
 *    b. commit the RESTORE (`operationParameters` with the version and the rewinding update's id);
 *    c. with reset_checkpoints, move each writing flow's HEAD to its checkpoint at the target (the
 *       root for a flow that had not run): offsets and operator state together;
 *    d. record a `rewind_progress` event.
 *    A dataset with no version at the target is emptied instead of restored (TRUNCATE, or DROP as
 *    the spec's `not_in_point_mode` says), and its flows' HEAD goes to the root.
 * 2. FinishRewind: clear the block, and a refresh's reset-under-way mark when the target is before
 *    that refresh began and every dataset it names was RESTOREd (tables and checkpoints together), and record the final `rewind_summary` with `dry_run: false`.
 * Transformations do not run; the next ordinary update is the replay.
 */

export interface DatasetRewound {
  readonly dataset: string;
  readonly action: DatasetRewind["action"];
  /** RESTORE only. */
  readonly targetVersion?: number;
  /** The RESTORE commit's version, or undefined when the table was already at the target. */
  readonly restoreVersion?: number;
  /** TRUNCATE only: the commit that emptied it, or undefined when it was empty (or absent) already. */
  readonly truncateVersion?: number;
  readonly operationMetrics?: Readonly<Record<string, number>>;
  readonly flows: readonly { readonly flow: string; readonly from: number; readonly to: number }[];
}

/** Steps 1a–1d for one dataset. */
export async function rewindDataset(
  env: RewindEnvironment,
  dataset: DatasetRewind,
  updateId: string,
): Promise<DatasetRewound> {
  return withTableSnapshots(env.tableStore, (snapshots) => rewindWith(env, dataset, updateId, snapshots));
}

async function rewindWith(
  env: RewindEnvironment,
  dataset: DatasetRewind,
  updateId: string,
  snapshots: TableSnapshots,
): Promise<DatasetRewound> {
  if (dataset.action !== "RESTORE") return emptyDataset(env, dataset, updateId);
  const targetVersion = dataset.targetVersion!;
  const store = env.tableStore(dataset.dataset);
  // The table as it is now (a retried task may find it restored already), and the immutable target.
  const [current, target] = await Promise.all([
    snapshots.latest(dataset.dataset),
    snapshots.at(dataset.dataset, targetVersion),
  ]);
  if (!current) throw new TableNotFoundError(dataset.identifier);
  const restore = planRestore(current, target, env.clock());
  const needed =
    restore.filesToRestore.length > 0 ||
    restore.filesToRemove.length > 0 ||
    restore.txns.length > 0 ||
    restore.metadata !== undefined ||
    restore.protocol !== undefined;
  const committed = needed
    ? await executeRestore(store, current, restore, {
        clock: env.clock,
        extraParameters: { updateId },
        filesChecked: current.version === dataset.checkedVersion,
        beforeCommit: () => tableWriteFence(env, updateId)(`the RESTORE of ${dataset.identifier}`),
      })
    : undefined;

  const flows = await moveHeads(env, dataset, updateId);
  const result: DatasetRewound = {
    dataset: dataset.dataset,
    action: "RESTORE",
    targetVersion,
    ...(committed ? { restoreVersion: committed.version, operationMetrics: { ...restore.metrics } } : {}),
    flows,
  };
  await appendEvent(env, {
    event_type: EVENT_TYPES.rewindProgress,
    level: "INFO",
    message: committed
      ? `Rewound ${dataset.identifier} to version ${targetVersion} (RESTORE at version ${committed.version})`
      : `${dataset.identifier} already holds version ${targetVersion}: no RESTORE needed`,
    updateId,
    dataset: dataset.dataset,
    details: {
      rewind_progress: {
        dataset: dataset.identifier,
        action: "RESTORE",
        target_version: targetVersion,
        restore_version: committed?.version ?? null,
        reset_checkpoints: dataset.resetCheckpoints,
        operation_metrics: committed ? restore.metrics : null,
        flows,
      },
    },
    timestamp: env.clock(),
    retentionMs: env.pipeline.settings.rewindRetentionMs,
  });
  return result;
}

/**
 * Steps 1a–1d for a dataset with no version at the target: one TRUNCATE commit removes every file
 * (or DROP deletes the table), and its flows go back to the root. No `dataset_reset` is recorded:
 * after a TRUNCATE its history stays, so a later rewind to a point that knew it still restores it.
 */
async function emptyDataset(
  env: RewindEnvironment,
  dataset: DatasetRewind,
  updateId: string,
): Promise<DatasetRewound> {
  const how = dataset.action === "DROP" ? "DROP" : "TRUNCATE";
  const fence = () => tableWriteFence(env, updateId)(`emptying ${dataset.identifier}`);
  const reset = await resetTable(env.tableStore(dataset.dataset), { how }, env.clock, fence);
  const flows = await moveHeads(env, dataset, updateId);
  await appendEvent(env, {
    event_type: EVENT_TYPES.rewindProgress,
    level: "INFO",
    message:
      how === "DROP"
        ? `Dropped ${dataset.identifier}, which the rewind point does not know (its flows start again from their sources' start on replay)`
        : `Emptied ${dataset.identifier}, which the rewind point does not know${reset.version !== undefined ? ` (TRUNCATE at version ${reset.version})` : " (it held nothing)"}; its flows start again from their sources' start on replay`,
    updateId,
    dataset: dataset.dataset,
    details: {
      rewind_progress: {
        dataset: dataset.identifier,
        action: how,
        target_version: null,
        restore_version: null,
        truncate_version: reset.version ?? null,
        reset_checkpoints: dataset.resetCheckpoints,
        operation_metrics: null,
        flows,
      },
    },
    timestamp: env.clock(),
    retentionMs: env.pipeline.settings.rewindRetentionMs,
  });
  return {
    dataset: dataset.dataset,
    action: how,
    ...(reset.version !== undefined ? { truncateVersion: reset.version } : {}),
    flows,
  };
}

/** Step 1c: each writing flow's HEAD to its checkpoint at the target. */
async function moveHeads(
  env: RewindEnvironment,
  dataset: DatasetRewind,
  updateId: string,
): Promise<{ flow: string; from: number; to: number }[]> {
  const flows: { flow: string; from: number; to: number }[] = [];
  for (const flow of dataset.flows) {
    const ref = flowRef(env, flow.flow);
    const head = await env.checkpoints.head(ref);
    // Moved also when HEAD is there already: the move abandons a batch planned on top of it.
    const moved = await env.checkpoints.moveHead(ref, flow.targetSeq, {
      expectedHead: head.seq,
      activeUpdateId: updateId,
    });
    if (moved.outcome === "fenced") throw fencedOut(updateId, `moving flow ${flow.flow}'s HEAD`, moved);
    if (moved.outcome !== "moved") {
      throw new ConcurrentRewindChangeError(flow.flow, flow.targetSeq, moved.outcome);
    }
    flows.push({ flow: flow.flow, from: head.seq, to: flow.targetSeq });
  }
  return flows;
}

/**
 * Step 2, after the last wave: clear the block and record the final `rewind_summary` (dry_run false)
 * with the rewound datasets and flows at their targets. Returns the summary event's id.
 */
export async function completeRewind(
  env: RewindEnvironment,
  rewound: {
    readonly datasets: readonly DatasetRewind[];
    /** The target cut's table version per dataset. */
    readonly cut: PipelineCut["datasets"];
    /** The target cut's time (epoch ms). */
    readonly time: number;
  },
  updateId: string,
): Promise<string> {
  await env.pipelines.setRewindBlock(env.pipelineId, { blocked: false });
  const stopped = (await env.pipelines.get(env.pipelineId))?.resetUnderWay;
  // Only a RESTORE puts table and checkpoints back together: a table the stopped refresh dropped has
  // no history left to restore, and its downstream readers' restored checkpoints name the old table.
  const restored = new Set(rewound.datasets.filter((d) => d.action === "RESTORE").map((d) => d.dataset));
  if (stopped && rewound.time < stopped.since && stopped.datasets.every((d) => restored.has(d)))
    await env.pipelines.clearResetUnderWay(env.pipelineId);
  const now = env.clock();
  const cut: PipelineCut = {
    time: now,
    datasets: new Map(
      rewound.datasets.flatMap((d) => {
        const at = rewound.cut.get(d.dataset);
        return at ? [[d.dataset, at] as const] : [];
      }),
    ),
    flows: new Map(rewound.datasets.flatMap((d) => d.flows.map((f) => [f.flow, f.targetSeq] as const))),
  };
  const summary = await appendEvent(
    env,
    rewindSummaryEvent({
      catalog: env.pipeline.definition.catalog,
      schema: env.pipeline.definition.schema,
      kind: "rewind",
      cut,
      now,
      retentionMs: env.pipeline.settings.rewindRetentionMs,
      updateId,
    }),
  );
  return summary.id;
}
