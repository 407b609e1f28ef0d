import { StoreError, StoreUnavailableError } from "../object-store/errors.ts";

/**
 * A stream a source reads (Kafka's brokers, a Kinesis endpoint) could not be reached or cannot serve
 * now: a restart, a leader moving. The update's tasks retry it (its own name in their Retry list);
 * an outage that outlasts the retries fails the update with this code, not as an Ebb bug, so
 * alerting can tell a source down from a defect.
 */
export class SourceUnavailableError extends StoreUnavailableError {
  override readonly name = "SourceUnavailableError";
  override readonly errorCode = "SOURCE_UNAVAILABLE";
  override readonly httpStatus = 503;
}

/** Configuration the repositories need is missing (read once at start-up, failing loudly). */
export class StoreConfigurationError extends StoreError {
  override readonly name = "StoreConfigurationError";
  override readonly errorCode = "INTERNAL_ERROR";
}

/** A streaming source's connection settings cannot be used as given (a variable not set, no region). */
export class SourceSettingsError extends StoreError {
  override readonly name = "SourceSettingsError";
  override readonly errorCode = "INVALID_SOURCE_SETTINGS";
  override readonly httpStatus = 400;
}

/** No pipeline with this id (or it was deleted). */
export class PipelineNotFoundError extends StoreError {
  override readonly name = "PipelineNotFoundError";
  override readonly errorCode = "RESOURCE_DOES_NOT_EXIST";
  constructor(readonly pipelineId: string) {
    super(`pipeline ${pipelineId} does not exist`);
  }
}

/** No definition version with this number for the pipeline. */
export class DefinitionVersionNotFoundError extends StoreError {
  override readonly name = "DefinitionVersionNotFoundError";
  override readonly errorCode = "RESOURCE_DOES_NOT_EXIST";
  constructor(
    readonly pipelineId: string,
    readonly version: number,
  ) {
    super(`pipeline ${pipelineId} has no definition version ${version}`);
  }
}

/** No update with this id in the pipeline. */
export class UpdateNotFoundError extends StoreError {
  override readonly name = "UpdateNotFoundError";
  override readonly errorCode = "RESOURCE_DOES_NOT_EXIST";
  constructor(
    readonly pipelineId: string,
    readonly updateId: string,
  ) {
    super(`pipeline ${pipelineId} has no update ${updateId}`);
  }
}

/** No checkpoint with this seq for the flow. */
export class CheckpointNotFoundError extends StoreError {
  override readonly name = "CheckpointNotFoundError";
  override readonly errorCode = "RESOURCE_DOES_NOT_EXIST";
  constructor(
    readonly flowKey: string,
    readonly seq: number,
  ) {
    super(`flow ${flowKey} has no checkpoint ${seq}`);
  }
}

/** A `page_token` that this store did not issue (or that belongs to another listing). */
export class InvalidPageTokenError extends StoreError {
  override readonly name = "InvalidPageTokenError";
  override readonly errorCode = "INVALID_PARAMETER_VALUE";
  constructor(readonly token: string) {
    super(
      `page_token ${JSON.stringify(token.slice(0, 80))} is not valid: pass a token from a previous page unchanged`,
    );
  }
}

/** A definition too large to store as one version (DynamoDB items hold at most 400 KB). */
export class DefinitionTooLargeError extends StoreError {
  override readonly name = "DefinitionTooLargeError";
  override readonly errorCode = "INVALID_PARAMETER_VALUE";
  constructor(
    readonly bytes: number,
    readonly limit: number,
  ) {
    super(
      `the pipeline definition is ${bytes} bytes as JSON; at most ${limit} can be stored: split the pipeline or move long SQL into views`,
    );
  }
}

/**
 * A create or an edit that would claim, release and write more than one DynamoDB transaction holds
 * (`checkChangeFits`); split, it would no longer be all or none.
 */
export class PipelineChangeTooLargeError extends StoreError {
  override readonly name = "PipelineChangeTooLargeError";
  override readonly errorCode = "PIPELINE_CHANGE_TOO_LARGE";
  override readonly httpStatus = 400;
  readonly writes: number;
  constructor(
    pipeline: { readonly id?: string; readonly name: string },
    change: {
      readonly writes: number;
      readonly limit: number;
      readonly claimed: number;
      readonly released: number;
      readonly events: number;
    },
  ) {
    const named = pipeline.id
      ? `pipeline ${pipeline.id} ("${pipeline.name}")`
      : `pipeline "${pipeline.name}"`;
    const way = pipeline.id
      ? "edit in smaller steps: add or remove fewer datasets per edit"
      : "create it with fewer datasets, then add the rest by edits";
    super(
      `${named}: this ${pipeline.id ? "edit" : "create"} claims ${change.claimed} tables, releases ${change.released} and writes ${change.events} events, ${change.writes} writes in all where one atomic change holds at most ${change.limit}: ${way}`,
      { data: { writes: change.writes, limit: change.limit } },
    );
    this.writes = change.writes;
  }
}

/**
 * A dataset's table belongs to another pipeline (a table has one owner). An expected outcome of a
 * create or edit, raised as an error because the API answers it directly (409).
 */
/**
 * A streaming table a pipeline declares already exists with rows no flow of the pipeline wrote
 * (`unowned-tables.ts`): Databricks' class for a table that is already there.
 */
export class TableExistsError extends StoreError {
  override readonly name = "TableExistsError";
  override readonly errorCode = "TABLE_OR_VIEW_ALREADY_EXISTS";
  override readonly httpStatus = 409;
  constructor(
    /** Each table and its folder in Ebb's bucket. */
    readonly tables: readonly { readonly table: string; readonly prefix: string }[],
  ) {
    const one = tables.length === 1;
    const names = tables.map((t) => t.table).join(", ");
    super(
      `table${one ? "" : "s"} ${names} already exist${one ? "s" : ""} and no pipeline owns ${one ? "it" : "them"} (kept when ${one ? "its" : "their"} pipeline was deleted without purge, or written outside Ebb): this pipeline's flows would start from nothing and append their sources' rows beside the rows ${one ? "it holds" : "they hold"}. Read ${one ? "it" : "them"} where ${one ? "it is" : "they are"}, remove ${one ? "its" : "their"} files first (in Ebb's bucket: ${tables.map((t) => `aws s3 rm --recursive s3://$EBB_BUCKET/${t.prefix}`).join("; ")}), or declare the dataset${one ? "" : "s"} under another name, catalog or schema`,
      { data: { tables: tables.map((t) => t.table) } },
    );
  }
}

export class TableOwnedError extends StoreError {
  override readonly name = "TableOwnedError";
  override readonly errorCode = "TABLE_OWNED_BY_ANOTHER_PIPELINE";
  override readonly httpStatus = 409;
  constructor(
    readonly table: string,
    readonly ownerPipelineId: string,
  ) {
    super(
      `table ${table} belongs to pipeline ${ownerPipelineId}: a table has one owner; give the dataset another name (or the pipeline another catalog or schema), or delete pipeline ${ownerPipelineId} with purge, which removes its tables and releases their names`,
    );
  }
}
