import { randomUUID } from "node:crypto";
import type { DuckRow } from "../../../shared/duck/duck-session.ts";
import { DeltaTable } from "../../../shared/delta/index.ts";
import { DatasetCatalog } from "../../../shared/engine/dataset-catalog.ts";
import type { CrashHook } from "../../../shared/engine/crash-points.ts";
import { runUpdate, type EngineServices, type UpdateResult } from "../../../shared/engine/update-runner.ts";
import { SqlReferenceParser } from "../../../shared/pipeline/sql-references.ts";
import { validatePipeline, type ValidatedPipeline } from "../../../shared/pipeline/validate-pipeline.ts";
import { DynamoCheckpointsRepository } from "../../../shared/store/dynamo-checkpoints-repository.ts";
import { DynamoEventLogRepository } from "../../../shared/store/dynamo-event-log-repository.ts";
import { DynamoUpdatesRepository } from "../../../shared/store/dynamo-updates-repository.ts";
import type { ObjectStore } from "../../../shared/store/object-store.ts";
import { S3ObjectStore } from "../../../shared/store/s3-object-store.ts";
import { testAws, testDocumentClient, testS3Client, uniquePrefix } from "../../support/aws.ts";

/**
 * The engine wired to the embedded stand-ins for one test: its own prefix in the bucket (tables,
 * state, and a landing folder for auto_loader files), its own pipeline id in the shared tables.
 */
export class EngineHarness {
  readonly pipelineId = randomUUID();
  readonly prefix = uniquePrefix("engine");
  readonly store: S3ObjectStore;
  /** Where test files land, and its `s3://` URI for definitions. */
  readonly landing: ObjectStore;
  readonly landingUri: string;
  readonly services: EngineServices;
  private parser: SqlReferenceParser | undefined;

  constructor(options: { readonly crash?: CrashHook; readonly clock?: () => number } = {}) {
    const { storage } = testAws();
    const client = testDocumentClient();
    this.store = s3Store(`${this.prefix}pipeline/`);
    this.landingUri = `s3://${storage.bucket}/${this.prefix}landing/`;
    this.landing = s3Store(`${this.prefix}landing/`);
    this.services = {
      store: this.store,
      checkpoints: new DynamoCheckpointsRepository({ client, tableName: storage.checkpointsTable }),
      updates: new DynamoUpdatesRepository({ client, tableName: storage.updatesTable }),
      events: new DynamoEventLogRepository({ client, tableName: storage.eventLogTable }),
      locate,
      ...(options.crash ? { crash: options.crash } : {}),
      ...(options.clock ? { clock: options.clock } : {}),
    };
  }

  async validate(definition: unknown): Promise<ValidatedPipeline> {
    this.parser ??= await SqlReferenceParser.open();
    return validatePipeline(definition, this.parser);
  }

  async run(pipeline: ValidatedPipeline, options: { selection?: string[] } = {}): Promise<UpdateResult> {
    return runUpdate(this.services, {
      pipelineId: this.pipelineId,
      pipeline,
      definitionVersion: 1,
      ...(options.selection ? { selection: options.selection } : {}),
    });
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

  close(): void {
    this.parser?.close();
  }
}

function s3Store(prefix: string): S3ObjectStore {
  return new S3ObjectStore({ client: testS3Client(), bucket: testAws().storage.bucket, prefix });
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
