import { NO_LIFECYCLE_EVENTS } from "../../../shared/control/plane/lifecycle-events.ts";
import type { DuckRow } from "../../../shared/duck/duck-session.ts";
import { DeltaTable, tablePropertiesError } from "../../../shared/delta/index.ts";
import { parseWith } from "../../../shared/api/request-body.ts";
import { startUpdateBody } from "../../../shared/api/request-schemas.ts";
import type { ControlPlane } from "../../../shared/control/plane/control-plane.ts";
import { InProcessExecutions } from "../../../shared/control/updates/driver/in-process-executions.ts";
import { startUpdate } from "../../../shared/control/updates/start-update.ts";
import type { DrivenUpdate } from "../../../shared/control/updates/driver/update-driver.ts";
import type { UpdateTask } from "../../../shared/control/updates/update-tasks.ts";
import { DatasetCatalog } from "../../../shared/engine/dataset-catalog.ts";
import type { CrashHook } from "../../../shared/engine/crash-points.ts";
import { SqlReferenceParser } from "../../../shared/pipeline/sql-references.ts";
import { validatePipeline, type ValidatedPipeline } from "../../../shared/pipeline/validate-pipeline.ts";
import { DynamoCheckpointsRepository } from "../../../shared/store/dynamo-checkpoints-repository.ts";
import { DynamoEventLogRepository } from "../../../shared/store/dynamo-event-log-repository.ts";
import { DynamoPipelinesRepository } from "../../../shared/store/dynamo-pipelines-repository.ts";
import { DynamoUpdatesRepository } from "../../../shared/store/dynamo-updates-repository.ts";
import type { ObjectStore } from "../../../shared/object-store/object-store.ts";
import { S3ObjectStore } from "../../../shared/object-store/s3-object-store.ts";
import { testAws, testDocumentClient, testS3Client, uniquePrefix } from "../../support/aws.ts";
import type { SparkJobs } from "../../../shared/engine/spark/spark-jobs.ts";
import { networkEventStreams } from "../../../shared/store/event-stream-clients.ts";

/**
 * The control plane on the embedded stand-ins for one test: its own prefix in the bucket (tables,
 * state, and a landing folder for auto_loader files), its own pipeline in the shared tables. Each
 * `run` deploys the definition (when it changed) and starts an update through `startUpdate`, which
 * the in-process driver runs through the control-plane steps.
 */
export class EngineHarness {
  /** Set by the first `run` (the Pipelines repository hands out ids). */
  pipelineId = "";
  readonly prefix = uniquePrefix("engine");
  readonly store: S3ObjectStore;
  /** Where test files land, and its `s3://` URI for definitions. */
  readonly landing: ObjectStore;
  readonly landingUri: string;
  readonly plane: ControlPlane;
  /** Told each task state the driver enters (a test's way in between steps). */
  onTask: ((state: UpdateTask) => void | Promise<void>) | undefined;
  private readonly executions: InProcessExecutions;
  private parser: Promise<SqlReferenceParser> | undefined;
  private deployed: { definition: string; version: number } | undefined;

  constructor(
    options: {
      readonly crash?: CrashHook;
      readonly clock?: () => number;
      readonly budgetMs?: number;
      /** What the engine sees of the bucket (e.g. a store whose uploads are slow). */
      readonly bucket?: (store: ObjectStore) => ObjectStore;
      /** The Spark engine, given the harness's folder of the bucket (its pipeline store's prefix). */
      readonly spark?: (pipelinePrefix: string) => SparkJobs;
    } = {},
  ) {
    const { storage } = testAws();
    const client = testDocumentClient();
    this.store = s3Store(`${this.prefix}pipeline/`);
    this.landingUri = `s3://${storage.bucket}/${this.prefix}landing/`;
    this.landing = s3Store(`${this.prefix}landing/`);
    this.executions = new InProcessExecutions(() => this.plane, {
      ...(options.crash ? { crash: options.crash } : {}),
      ...(options.budgetMs === undefined ? {} : { budgetMs: options.budgetMs }),
      onTask: (state) => this.onTask?.(state),
    });
    const now = options.clock ? { now: options.clock } : {};
    this.plane = {
      pipelines: new DynamoPipelinesRepository({ client, tableName: storage.pipelinesTable, ...now }),
      updates: new DynamoUpdatesRepository({ client, tableName: storage.updatesTable, ...now }),
      checkpoints: new DynamoCheckpointsRepository({
        client,
        tableName: storage.checkpointsTable,
        pipelinesTableName: storage.pipelinesTable,
        ...now,
      }),
      events: new DynamoEventLogRepository({ client, tableName: storage.eventLogTable, ...now }),
      bucket: options.bucket ? options.bucket(this.store) : this.store,
      locate,
      // Its sources are s3:// locations.
      eventStreams: networkEventStreams,
      localRoots: [],
      executions: this.executions,
      sql: {
        analyze: async (sql) => (await this.sqlParser()).analyze(sql),
        analyzeCondition: async (condition) => (await this.sqlParser()).analyzeCondition(condition),
        deparse: async (statement) => (await this.sqlParser()).deparse(statement),
      },
      clock: options.clock ?? Date.now,
      ...(options.spark ? { spark: options.spark(`${this.prefix}pipeline/`) } : {}),
      lifecycle: NO_LIFECYCLE_EVENTS,
    };
  }

  private sqlParser(): Promise<SqlReferenceParser> {
    return (this.parser ??= SqlReferenceParser.open());
  }

  async validate(definition: unknown): Promise<ValidatedPipeline> {
    return validatePipeline(definition, await this.sqlParser(), tablePropertiesError);
  }

  /** Deploys `pipeline` if it is not the current definition, runs an update and waits for its end. */
  async run(
    pipeline: ValidatedPipeline,
    options: { selection?: string[] } = {},
  ): Promise<DrivenUpdate & { readonly updateId: string }> {
    const updateId = await this.start(pipeline, options);
    return { ...(await this.settled(updateId)), updateId };
  }

  /** Deploys `pipeline` if it is not the current definition and starts an update; answers its id. */
  async start(pipeline: ValidatedPipeline, request: Record<string, unknown> = {}): Promise<string> {
    await this.deploy(pipeline);
    const body = parseWith(startUpdateBody, request);
    return (await startUpdate(this.plane, this.pipelineId, body)).update_id;
  }

  /** The update's execution, once it has ended. */
  settled(updateId: string): Promise<DrivenUpdate> {
    return this.executions.settled(updateId);
  }

  /** The in-process executions: `stop` ends one behind Ebb's back, as a lost Lambda would. */
  get stateMachine(): InProcessExecutions {
    return this.executions;
  }

  private async deploy(pipeline: ValidatedPipeline): Promise<void> {
    const definition = JSON.stringify(pipeline.definition);
    if (this.deployed?.definition === definition) return;
    if (!this.deployed) {
      this.pipelineId = (await this.plane.pipelines.create(pipeline.definition)).pipelineId;
      this.deployed = { definition, version: 1 };
      return;
    }
    const edited = await this.plane.pipelines.edit(
      this.pipelineId,
      pipeline.definition,
      this.deployed.version,
    );
    if (edited.outcome !== "edited") throw new Error(`deploy lost a race: ${edited.outcome}`);
    this.deployed = { definition, version: edited.version };
  }

  /** Writes a landing file. */
  async land(key: string, text: string): Promise<void> {
    await this.landing.put(key, new TextEncoder().encode(text));
  }

  /** Every row of a dataset's table (or `undefined` when it has no table). */
  async rows(pipeline: ValidatedPipeline, dataset: string, orderBy?: string): Promise<DuckRow[]> {
    const table = await DeltaTable.open(new DatasetCatalog(pipeline, this.store).tableStore(dataset));
    try {
      const rows = await table.scan();
      if (!orderBy) return rows;
      return rows.sort((a, b) =>
        String(a[orderBy]).localeCompare(String(b[orderBy]), "en", { numeric: true }),
      );
    } finally {
      await table.close();
    }
  }

  /** The version of a dataset's table (-1 before its first commit). */
  async tableVersion(pipeline: ValidatedPipeline, dataset: string): Promise<number> {
    const store = new DatasetCatalog(pipeline, this.store).tableStore(dataset);
    const table = await DeltaTable.open(store).catch(() => undefined);
    try {
      return table?.snapshot.version ?? -1;
    } finally {
      await table?.close();
    }
  }

  /** Deletes the pipeline (its tables are claimed in the shared Pipelines table) and closes DuckDB. */
  async close(): Promise<void> {
    if (this.pipelineId !== "") await this.plane.pipelines.delete(this.pipelineId);
    (await this.parser)?.close();
  }
}

function s3Store(prefix: string): S3ObjectStore {
  return new S3ObjectStore({ client: testS3Client(), bucket: testAws().storage.bucket, prefix });
}

/**
 * The `raw` streaming table many engine tests start from: the JSON files landed in the harness's
 * folder (`jsonLines`), their `id` read by auto_loader in flow `ingest`.
 */
export function rawIdsTable(harness: EngineHarness, options?: { readonly max_files_per_batch: number }) {
  return {
    type: "streaming_table",
    name: "raw",
    flows: [
      {
        name: "ingest",
        source: { type: "auto_loader", path: harness.landingUri, format: "json", schema: { id: "BIGINT" } },
        sql: "SELECT id FROM source",
        ...(options ? { options } : {}),
      },
    ],
  } as const;
}

/** `s3://<bucket>/<prefix>` → the store rooted there. */
export function locate(location: string): ObjectStore {
  const match = /^s3:\/\/([^/]+)\/?(.*)$/.exec(location);
  if (!match) throw new Error(`not an s3:// location: ${location}`);
  const prefix = match[2] === "" || match[2]!.endsWith("/") ? match[2]! : `${match[2]}/`;
  return new S3ObjectStore({ client: testS3Client(), bucket: match[1]!, prefix });
}

/** `n` JSON lines `{"id": i, "amount": i * 10, "region": ...}` for ids `from .. from + n - 1`. */
export function jsonLines(from: number, n: number): string {
  const regions = ["eu", "us", "apac"];
  return (
    Array.from({ length: n }, (_, i) => {
      const id = from + i;
      return JSON.stringify({ id, amount: id * 10, region: regions[id % 3] });
    }).join("\n") + "\n"
  );
}
