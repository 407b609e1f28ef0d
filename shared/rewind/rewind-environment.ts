import type { ValidatedPipeline } from "../pipeline/validate-pipeline.ts";
import type { CheckpointsRepository, FlowRef } from "../store/checkpoints-repository.ts";
import type { ObjectStore } from "../object-store/object-store.ts";
import type { PipelinesRepository } from "../store/pipelines-repository.ts";
import type { EventLogRepository } from "../store/event-log-repository.ts";
import type { EventStreams } from "../store/event-streams.ts";
import { updateFence, type UpdateFence } from "../engine/update-fence.ts";

/**
 * Everything the rewind domain reads and writes, as ports (no AWS types): the same core runs in a
 * Step Functions task, the local runtime and unit tests. One environment serves one pipeline.
 */
export interface RewindEnvironment {
  readonly pipelineId: string;
  /** The pipeline's current definition, validated (settings, DAG). */
  readonly pipeline: ValidatedPipeline;
  readonly checkpoints: CheckpointsRepository;
  readonly events: EventLogRepository;
  /** For the rewind block and the reset-under-way mark (semantics.md "Doing the rewind", "Refresh and reset"). */
  readonly pipelines: Pick<
    PipelinesRepository,
    "get" | "setRewindBlock" | "markResetUnderWay" | "clearResetUnderWay"
  >;
  /** The object-store view of a dataset's table folder (`tables/<catalog>/<schema>/<name>/`). */
  tableStore(dataset: string): ObjectStore;
  /** The store that holds flows' state files (`state/<pipelineId>/<flowId>/…` keys). */
  readonly stateStore: ObjectStore;
  /** The object-store view of an external location (an auto_loader prefix, a Delta table path). */
  sourceStore(path: string): ObjectStore;
  /** Kafka and Kinesis clients, for source retention. */
  readonly eventStreams: EventStreams;
  readonly clock: () => number;
}

/** The fence of `updateId`'s table writes: it must still be the pipeline's active update. */
export function tableWriteFence(env: RewindEnvironment, updateId: string): UpdateFence {
  return updateFence(
    updateId,
    async () => (await env.pipelines.get(env.pipelineId))?.activeUpdateId === updateId,
  );
}

/** A flow's checkpoint key. Flow names are unique within a pipeline, so the name is the flow id. */
export function flowRef(env: Pick<RewindEnvironment, "pipelineId">, flow: string): FlowRef {
  return { pipelineId: env.pipelineId, flowId: flow };
}
