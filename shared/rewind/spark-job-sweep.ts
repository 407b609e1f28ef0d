import { planSparkJobSweep } from "../engine/spark/spark-job-folders.ts";
import { listAllKeys } from "../object-store/object-store.ts";
import { branchPipelineId, legacySparkJobsPrefix, sparkJobsPrefix } from "../store/bucket-layout.ts";
import type { CheckpointsRepository } from "../store/checkpoints-repository.ts";
import type { RewindEnvironment } from "./rewind-environment.ts";

/**
 * VACUUM's step for a flow's Spark jobs (engine/spark/spark-job-folders.ts): in the live pipeline's
 * folder and each branch's, the settled batches' folders at once and the rest past the retention;
 * the same for the folder jobs were kept in before (`legacySparkJobsPrefix`). Returns the keys
 * deleted (or, in a dry run, to delete).
 */
export async function sweepSparkJobs(
  env: Pick<RewindEnvironment, "pipelineId" | "stateStore"> & {
    readonly checkpoints: Pick<CheckpointsRepository, "resume">;
  },
  flow: string,
  branches: readonly string[],
  options: { readonly now: number; readonly retentionMs: number; readonly dryRun?: boolean },
): Promise<string[]> {
  const pipelineIds = [env.pipelineId, ...branches.map((branch) => branchPipelineId(env.pipelineId, branch))];
  const keys: string[] = [];
  for (const pipelineId of pipelineIds) {
    const { head, abandonedThrough } = await env.checkpoints.resume({ pipelineId, flowId: flow });
    for (const prefix of [sparkJobsPrefix(pipelineId, flow), legacySparkJobsPrefix(pipelineId, flow)]) {
      keys.push(
        ...planSparkJobSweep({
          listing: await listAllKeys(env.stateStore, prefix),
          prefix,
          settledThrough: Math.max(head.seq, abandonedThrough),
          cutoff: options.now - options.retentionMs,
        }),
      );
    }
  }
  if (!options.dryRun && keys.length > 0) await env.stateStore.deleteMany(keys);
  return keys;
}
