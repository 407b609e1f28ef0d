import type { SqlAnalyzer, ValidatedPipeline } from "../../pipeline/validate-pipeline.ts";
import { validatePipeline } from "../../pipeline/validate-pipeline.ts";
import type { SparkJobs } from "../../engine/spark/spark-jobs.ts";
import { DefinitionCache } from "./definition-cache.ts";
import type { RewindEnvironment } from "../../rewind/rewind-environment.ts";
import type { CheckpointsRepository } from "../../store/checkpoints-repository.ts";
import { PipelineNotFoundError } from "../../store/errors.ts";
import type { EventLogRepository } from "../../store/event-log-repository.ts";
import type { ObjectStore } from "../../object-store/object-store.ts";
import { tablePrefix } from "../../store/bucket-layout.ts";
import { withPrefix } from "../../object-store/prefixed-object-store.ts";
import type { PipelineRecord, PipelinesRepository } from "../../store/pipelines-repository.ts";
import type { UpdatesRepository } from "../../store/updates-repository.ts";
import type { EventStreams } from "../../store/event-streams.ts";
import type { UpdateExecutions } from "./update-executions.ts";
import type { LifecycleEvents } from "./lifecycle-events.ts";
import { tablePropertiesError } from "../../delta/index.ts";
import type { MetricsSink } from "../metrics/metric-points.ts";

/**
 * Everything the control plane (the API handlers and the state machine's tasks) works with, as ports:
 * built once per process from the environment on AWS (`functions/runtime/`), and the same way by the
 * local runtime and the tests. No AWS types.
 */
export interface ControlPlane {
  readonly pipelines: PipelinesRepository;
  readonly updates: UpdatesRepository;
  readonly checkpoints: CheckpointsRepository;
  readonly events: EventLogRepository;
  /** The pipelines' bucket (root view): `tables/…` and `state/…`. */
  readonly bucket: ObjectStore;
  /**
   * The store rooted at an external location (`s3://bucket/prefix`, or a folder under `localRoots`):
   * auto_loader and delta sources, definition files. Refuses what `checkSourceLocation` refuses.
   */
  readonly locate: (location: string) => ObjectStore;
  /** The folders of this machine sources may read: none on AWS (S3 only); the local runtime's roots. */
  readonly localRoots: readonly string[];
  /** Opens the Kafka and Kinesis clients a source's settings describe (flows read them, rewinds check their retention). */
  readonly eventStreams: EventStreams;
  /** Starts and stops the state-machine execution of an update. */
  readonly executions: UpdateExecutions;
  /** Tells people and systems outside the pipeline what its updates do (docs/events.md). */
  readonly lifecycle: LifecycleEvents;
  /** Parses SQL for definition validation. */
  readonly sql: SqlAnalyzer;
  /** Epoch milliseconds. */
  readonly clock: () => number;
  /** The Spark engine, where this deployment has one (engine/spark/spark-jobs.ts). */
  readonly spark?: SparkJobs | undefined;
  /**
   * Where metrics go (metrics/metric-points.ts): CloudWatch embedded-metric-format lines on Lambda;
   * none when unset. `events` should already count the events it stores (metered-event-log.ts).
   */
  readonly metrics?: MetricsSink | undefined;
}

/** The pipeline, or `RESOURCE_DOES_NOT_EXIST`. */
export async function requirePipeline(plane: ControlPlane, pipelineId: string): Promise<PipelineRecord> {
  const pipeline = await plane.pipelines.get(pipelineId);
  if (!pipeline || pipeline.state === "DELETED") throw new PipelineNotFoundError(pipelineId);
  return pipeline;
}

const definitionCaches = new WeakMap<ControlPlane, DefinitionCache>();

/**
 * A stored definition version (the current one by default), validated: settings and DAG. Each version
 * is read and validated once per control plane (definition-cache.ts): versions never change.
 */
export async function loadPipeline(
  plane: ControlPlane,
  pipelineId: string,
  version?: number,
): Promise<{ readonly version: number; readonly pipeline: ValidatedPipeline }> {
  let cache = definitionCaches.get(plane);
  if (!cache) definitionCaches.set(plane, (cache = new DefinitionCache()));
  const at = version ?? (await requirePipeline(plane, pipelineId)).definitionVersion;
  const pipeline = await cache.get(pipelineId, at, async () =>
    validatePipeline(
      (await plane.pipelines.getDefinition(pipelineId, at)).definition,
      plane.sql,
      tablePropertiesError,
    ),
  );
  return { version: at, pipeline };
}

/** The rewind domain's view of one pipeline. */
export function rewindEnvironment(
  plane: ControlPlane,
  pipelineId: string,
  pipeline: ValidatedPipeline,
): RewindEnvironment {
  const { catalog, schema } = pipeline.definition;
  return {
    pipelineId,
    pipeline,
    checkpoints: plane.checkpoints,
    events: plane.events,
    pipelines: plane.pipelines,
    tableStore: (dataset) => withPrefix(plane.bucket, tablePrefix({ catalog, schema, table: dataset })),
    stateStore: plane.bucket,
    sourceStore: plane.locate,
    eventStreams: plane.eventStreams,
    clock: plane.clock,
  };
}
