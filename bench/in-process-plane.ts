import { NO_LIFECYCLE_EVENTS } from "../shared/control/plane/lifecycle-events.ts";
import { mkdir } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { startEmbeddedEbb } from "../infra/local/embedded-ebb.ts";
import type { ControlPlane } from "../shared/control/plane/control-plane.ts";
import type { SparkJobs } from "../shared/engine/spark/spark-jobs.ts";
import { InProcessExecutions } from "../shared/control/updates/driver/in-process-executions.ts";
import type { DrivenUpdate } from "../shared/control/updates/driver/update-driver.ts";
import { startUpdate } from "../shared/control/updates/start-update.ts";
import { LocalObjectStore } from "../shared/object-store/local-object-store.ts";
import type { PipelineDefinition } from "../shared/pipeline/definition-schema.ts";
import { parseDefinition } from "../shared/pipeline/parse-definition.ts";
import { SqlReferenceParser } from "../shared/pipeline/sql-references.ts";
import { createDocumentClient } from "../shared/store/aws-clients.ts";
import { DynamoCheckpointsRepository } from "../shared/store/dynamo-checkpoints-repository.ts";
import { DynamoEventLogRepository } from "../shared/store/dynamo-event-log-repository.ts";
import { DynamoPipelinesRepository } from "../shared/store/dynamo-pipelines-repository.ts";
import { DynamoUpdatesRepository } from "../shared/store/dynamo-updates-repository.ts";
import { MemoryCheckpointsRepository } from "../shared/store/memory-checkpoints-repository.ts";
import { MemoryEventLogRepository } from "../shared/store/memory-event-log-repository.ts";
import { MemoryPipelinesRepository } from "../shared/store/memory-pipelines-repository.ts";
import { MemoryUpdatesRepository } from "../shared/store/memory-updates-repository.ts";
import { networkEventStreams } from "../shared/store/event-stream-clients.ts";

/**
 * The control plane in process, as the engine benchmarks drive it: tables and landing files in a
 * local-folder object store under `work` (S3's stand-in would measure s3rver, not Ebb); checkpoints,
 * updates and events in the embedded DynamoDB Local, as in the tests, or in memory; each update started through
 * start-update and run by the in-process driver over the control-plane steps.
 */
export interface InProcessPlane {
  readonly plane: ControlPlane;
  /** Creates the pipeline on its first update, then runs one update of it to the end (COMPLETED). */
  update(definition: unknown): Promise<DrivenUpdate>;
  /** Stops DynamoDB Local and the SQL parser (the caller removes `work`). */
  close(): Promise<void>;
}

/** What the in-process driver says of an update that completed. */
export type CompletedUpdate = Extract<
  Awaited<ReturnType<InProcessExecutions["settled"]>>,
  { state: "COMPLETED" }
>;

/**
 * Where the control plane's records live: DynamoDB Local (as in the tests), or memory, where a figure
 * should hold Ebb's own work and not the stand-in's JVM (each DynamoDB Local transaction takes
 * 20-200 ms on a loaded machine, DynamoDB's own a few).
 */
export type RecordTables = "dynamodb-local" | "memory";

async function recordRepositories(tables: RecordTables) {
  if (tables === "memory") {
    const pipelines = new MemoryPipelinesRepository(Date.now);
    return {
      repositories: {
        pipelines,
        checkpoints: new MemoryCheckpointsRepository(
          Date.now,
          async (pipelineId) => (await pipelines.get(pipelineId))?.activeUpdateId,
        ),
        updates: new MemoryUpdatesRepository(Date.now),
        events: new MemoryEventLogRepository(Date.now),
      },
      stop: async () => {},
    };
  }
  const { aws, storage } = await startEmbeddedEbb({ dataDir: "memory" });
  const client = createDocumentClient(aws.endpoints);
  return {
    repositories: {
      pipelines: new DynamoPipelinesRepository({ client, tableName: storage.pipelinesTable }),
      checkpoints: new DynamoCheckpointsRepository({
        client,
        tableName: storage.checkpointsTable,
        pipelinesTableName: storage.pipelinesTable,
      }),
      updates: new DynamoUpdatesRepository({ client, tableName: storage.updatesTable }),
      events: new DynamoEventLogRepository({ client, tableName: storage.eventLogTable }),
    },
    stop: () => aws.stop(),
  };
}

/** `spark`: the plane's Spark engine, given the bucket's folder (the Spark benchmark's). */
export async function startInProcessPlane(
  work: string,
  options: {
    readonly tables?: RecordTables;
    readonly spark?: (bucketFolder: string) => SparkJobs;
  } = {},
): Promise<InProcessPlane> {
  const records = await recordRepositories(options.tables ?? "dynamodb-local");
  const parser = await SqlReferenceParser.open();
  const store = new LocalObjectStore(path.join(work, "bucket"));
  await mkdir(store.root, { recursive: true });
  const executions = new InProcessExecutions(() => plane);
  const plane: ControlPlane = {
    ...records.repositories,
    bucket: store,
    locate: (location) => new LocalObjectStore(location),
    localRoots: [tmpdir(), work],
    executions,
    sql: parser,
    eventStreams: networkEventStreams,
    clock: Date.now,
    lifecycle: NO_LIFECYCLE_EVENTS,
    ...(options.spark ? { spark: options.spark(store.root) } : {}),
  };
  const pipelineIds = new Map<string, string>();
  return {
    plane,
    async update(input) {
      const definition: PipelineDefinition = parseDefinition(input);
      let pipelineId = pipelineIds.get(definition.name);
      if (pipelineId === undefined) {
        pipelineId = (await plane.pipelines.create(definition)).pipelineId;
        pipelineIds.set(definition.name, pipelineId);
      }
      const { update_id } = await startUpdate(plane, pipelineId, { cause: "API_CALL", validate_only: false });
      const result = await executions.settled(update_id);
      if (result.state !== "COMPLETED") throw result.error;
      return result;
    },
    async close() {
      parser.close();
      await records.stop();
    },
  };
}
