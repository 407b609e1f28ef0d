import type { ObjectInfo, ObjectStore } from "../../object-store/object-store.ts";
import { listAllKeys } from "../../object-store/object-store.ts";
import { sparkJobsPrefix } from "../../store/bucket-layout.ts";

/**
 * A Spark batch's own folder, `state/<pipelineId>/spark-jobs/<flow>/<seq>/<attempt>/`
 * (store/bucket-layout.ts), and when it may go.
 *
 * It holds the request (on AWS), the manifest, and each job run's state staging (`state/run-<id>/`);
 * only the batch's own commit step reads them. Nothing a commit references lies there: the data files
 * are staged under the table root and committed in place (VACUUM of the table weighs them), and the
 * job moves each state file into the flow's state folder before it writes the manifest. So:
 *
 * 1. A batch whose seq is at or below the flow's HEAD is settled: committed, or left behind by a
 *    rewind or reset (checkpoints-repository.ts: a seq is never reused, and a batch planned before a
 *    HEAD move is never resumed). Every attempt's folder of it may go at once, even one a dead job
 *    may still write to: no commit will ever read it.
 * 2. Any other folder (a batch in flight or still to be retried) goes only by age, as VACUUM's
 *    retention says: a retried batch finds its folder, as a Delta reader finds its files.
 *
 * Right after HEAD moves to a batch the flow's settled folders are deleted (micro-batch.ts); VACUUM
 * (rewind/spark-job-sweep.ts) removes what a crash between the two left, and what outlived retention.
 */

/** The folder of attempt `attempt` of batch `seq` of `flow`. */
export function sparkAttemptFolder(pipelineId: string, flow: string, seq: number, attempt: string): string {
  return `${sparkJobsPrefix(pipelineId, flow)}${seq}/${attempt}/`;
}

/** The attempt a key of batch `seq` of `flow` lies in (its request's, say), if it lies in one. */
export function attemptOfKey(key: string, flow: string, seq: number): string | undefined {
  const marker = `/spark-jobs/${flow}/${seq}/`;
  const at = key.indexOf(marker);
  if (at < 0) return undefined;
  return key.slice(at + marker.length).split("/")[0] || undefined;
}

export interface SparkJobSweep {
  /** The listing of one flow's Spark jobs folder (`sparkJobsPrefix`, or the legacy one). */
  readonly listing: readonly ObjectInfo[];
  readonly prefix: string;
  /** Batches at or below this seq are settled (step 1): HEAD, or the highest seq a HEAD move abandoned. */
  readonly settledThrough: number;
  /** Other keys last modified at or before this instant go (step 2); undefined: none by age. */
  readonly cutoff?: number;
}

/** Pure: the keys of the listing to delete. */
export function planSparkJobSweep(sweep: SparkJobSweep): string[] {
  return sweep.listing
    .filter((object) => {
      const seq = /^(\d+)\//.exec(object.key.slice(sweep.prefix.length))?.[1];
      if (object.key.startsWith(sweep.prefix) && seq !== undefined && Number(seq) <= sweep.settledThrough)
        return true;
      return sweep.cutoff !== undefined && object.lastModified <= sweep.cutoff;
    })
    .map((object) => object.key);
}

/** Deletes the folders of `flow`'s settled batches, now that HEAD is at `seq` (step 1). */
export async function discardSettledSparkJobs(
  store: ObjectStore,
  pipelineId: string,
  flow: string,
  seq: number,
): Promise<void> {
  const prefix = sparkJobsPrefix(pipelineId, flow);
  const keys = planSparkJobSweep({ listing: await listAllKeys(store, prefix), prefix, settledThrough: seq });
  if (keys.length > 0) await store.deleteMany(keys);
}
