import type { EventRecorder } from "./event-recorder.ts";
import { runMicroBatch, type BatchOutcome, type FlowRun } from "./micro-batch.ts";
import { UpdateCanceledError } from "./errors.ts";

/**
 * Runs a flow's micro-batches until it has caught up with its source (a batch took all there was, or
 * plans nothing new),
 * recording a `flow_progress` event per batch (and a `warning` when a batch skips versions an upstream
 * rewind abandoned). Between batches it checks whether the update was asked
 * to stop; a batch in progress always finishes its protocol or fails, never stops half-way on request.
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

export async function runFlowUntilCaughtUp(
  run: FlowRun,
  events: EventRecorder,
  shouldStop: () => Promise<boolean> = async () => false,
): Promise<FlowRunProgress> {
  let progress: FlowRunProgress = { batches: 0, rowsIn: 0, rowsOut: 0, badRecords: 0 };
  for (let i = 0; i < MAX_BATCHES_PER_RUN; i++) {
    if (await shouldStop())
      throw new UpdateCanceledError(`the update was stopped during flow "${run.flow.name}"`);
    const batch: BatchOutcome | undefined = await runMicroBatch(run);
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
