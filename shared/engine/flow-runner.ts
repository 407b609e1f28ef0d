import type { EventRecorder } from "./event-recorder.ts";
import { runMicroBatch, type BatchOutcome, type BatchReplan, type FlowRun } from "./micro-batch.ts";
import { BatchOversizedError, UpdateCanceledError } from "./errors.ts";
import { describeSize } from "./batch-size.ts";

/**
 * Runs a flow's micro-batches until it has caught up with its source (a batch took all there was, or
 * plans nothing new),
 * recording a `flow_progress` event per batch (and a `warning` when a batch skips versions an upstream
 * rewind abandoned). Between batches it checks whether the update was asked
 * to stop; a batch in progress always finishes its protocol or fails, never stops half-way on request.
 * A batch that failed for size is planned again at once, smaller (a `warning` names the flow and the
 * old and new batch sizes).
 */

export interface FlowRunProgress {
  readonly batches: number;
  readonly rowsIn: number;
  readonly rowsOut: number;
  readonly badRecords: number;
  /** The seq of the last batch committed by this run. */
  readonly lastSeq?: number;
}

/** Batches per flow per update, as a guard against a source that never stops growing. */
export const MAX_BATCHES_PER_RUN = 10_000;

/** Re-plans of batches that failed for size, per run: halving 2^64 files would not take more. */
const MAX_HALVINGS = 64;

/** The WARN event of a batch planned again, smaller (micro-batch.ts step 1). */
function warnReplanned(run: FlowRun, events: EventRecorder, replan: BatchReplan): Promise<void> {
  const newSize = replan.newSize ? describeSize(replan.newSize) : "a smaller batch";
  return events.warning(
    `Flow '${replan.flow}' re-planned batch ${replan.oldSeq} (${describeSize(replan.oldSize)}) as batch ${replan.newSeq} (${newSize}): ${replan.reason}`,
    {
      flow: replan.flow,
      old_batch_id: replan.oldSeq,
      old_batch_size: replan.oldSize,
      new_batch_id: replan.newSeq,
      ...(replan.newSize ? { new_batch_size: replan.newSize } : {}),
      reason: replan.reason,
    },
    { dataset_name: run.dataset.name, flow_name: replan.flow, flow_id: replan.flow, batch_id: replan.newSeq },
  );
}

export async function runFlowUntilCaughtUp(
  run: FlowRun,
  events: EventRecorder,
  shouldStop: () => Promise<boolean> = async () => false,
): Promise<FlowRunProgress> {
  let progress: FlowRunProgress = { batches: 0, rowsIn: 0, rowsOut: 0, badRecords: 0 };
  const replanning: FlowRun = { ...run, onReplan: (replan) => warnReplanned(run, events, replan) };
  let halvings = 0;
  for (let i = 0; i < MAX_BATCHES_PER_RUN; i++) {
    if (await shouldStop())
      throw new UpdateCanceledError(`the update was stopped during flow "${run.flow.name}"`);
    let batch: BatchOutcome | undefined;
    try {
      batch = await runMicroBatch(replanning);
    } catch (error) {
      // Each re-plan halves the batch, down to one file or record: a bounded number of them.
      if (!(error instanceof BatchOversizedError) || ++halvings > MAX_HALVINGS) throw error;
      i -= 1;
      continue;
    }
    if (!batch) break;
    await events.flowProgress(run.dataset.name, run.flow.name, batch);
    for (const skipped of batch.skippedRestores) {
      await events.warning(
        `Flow '${run.flow.name}' skipped versions ${skipped.restoredVersion + 1} to ${skipped.version} of its upstream: a rewind (RESTORE at version ${skipped.version}) abandoned them`,
        { flow: run.flow.name, restore_version: skipped.version, restored_version: skipped.restoredVersion },
        {
          dataset_name: run.dataset.name,
          flow_name: run.flow.name,
          flow_id: run.flow.name,
          batch_id: batch.seq,
        },
      );
    }
    progress = {
      batches: progress.batches + 1,
      rowsIn: progress.rowsIn + batch.rowsIn,
      rowsOut: progress.rowsOut + batch.rowsOut,
      badRecords: progress.badRecords + batch.badRecords,
      lastSeq: batch.seq,
    };
    if (batch.caughtUp) break;
  }
  return progress;
}
