import { z } from "zod";
import { caseInsensitiveEnum, strictObject } from "./strict-object.ts";
import { columnNameSchema, identifierSchema } from "./identifier.ts";
import { sourceSchema } from "./source-schema.ts";
import { autoCdcSchema } from "./auto-cdc-schema.ts";
import { parseTimestamp } from "./timestamp.ts";
import { parseInterval } from "./duration.ts";
import { parseByteSize } from "./byte-size.ts";
import { DEFINITION_ISSUE_CODES } from "./errors.ts";

/**
 * The pipeline definition (semantics.md "Pipeline, datasets, flows"; api.md `definition`): the single
 * source of its TypeScript types. Structure only; rules across fields (unique names, references,
 * cycles, rewind eligibility) are checked by `validatePipeline`.
 */

export const RESET_MODES = ["DROP", "TRUNCATE"] as const;
export const BAD_RECORDS_MODES = ["fail", "quarantine"] as const;
/** Databricks' `cloudFiles.useIncrementalListing` values (incremental-listing.ts says what each does). */
export const INCREMENTAL_LISTING_MODES = ["auto", "true", "false"] as const;
export type IncrementalListingMode = (typeof INCREMENTAL_LISTING_MODES)[number];

const resetModeSchema = caseInsensitiveEnum(RESET_MODES, (v) => v.toUpperCase()).default("DROP");
const sqlSchema = z.string().trim().min(1, { error: "sql must not be empty" });
const positiveCount = z
  .number()
  .int({ error: "must be a whole number" })
  .positive({ error: "must be greater than 0" });

/** A positive number of bytes, or a size such as `"256MB"` or `"1g"` (byte-size.ts), as bytes. */
const byteSizeSchema = z.union([z.number(), z.string()]).transform((v, ctx) => {
  const bytes = typeof v === "number" ? v : parseByteSize(v);
  if (bytes === undefined || !Number.isInteger(bytes) || bytes <= 0) {
    ctx.addIssue({
      code: "custom",
      message: `${JSON.stringify(v)} is not a size: give a whole number of bytes or a size such as "256MB" or "1g"`,
    });
    return z.NEVER;
  }
  return bytes;
});

/** ISO-8601 with a zone (`2026-01-31T12:00:00Z`) or UTC `yyyy-MM-dd HH:mm:ss` (semantics.md). */
const timestampSchema = z.string().refine((v) => parseTimestamp(v) !== undefined, {
  error: (issue) =>
    `${JSON.stringify(issue.input)} is not a timestamp: use UTC "yyyy-MM-dd HH:mm:ss" or ISO-8601 with a zone, e.g. "2026-01-31T12:00:00Z"`,
});

export const flowOptionsSchema = strictObject({
  /** At most this many source files (or Delta data files) per micro-batch. */
  max_files_per_batch: positiveCount.optional(),
  /** At most this many rows per micro-batch (a version may be split across batches). */
  max_rows_per_batch: positiveCount.optional(),
  /**
   * At most about this many bytes of source files per micro-batch (Spark's `maxBytesPerTrigger`): a
   * number of bytes or a size (`"256MB"`, `"1g"`). A file larger than it is read alone.
   * @default the task function's share (`EBB_BATCH_MAX_BYTES`, from the stack's sizing props)
   */
  max_bytes_per_batch: byteSizeSchema.optional(),
  /** At most this many records per micro-batch of a kafka or kinesis source (Spark's maxOffsetsPerTrigger). */
  max_offsets_per_batch: positiveCount.optional(),
  /**
   * How an auto_loader source lists its path (Databricks' `cloudFiles.useIncrementalListing`):
   * `auto` lists only keys after the last one processed while names arrive in order, with a full
   * listing every 8th time; `true` always lists incrementally; `false` always in full. @default "auto" (as on Databricks)
   */
  use_incremental_listing: z
    .preprocess(
      (v) => (typeof v === "boolean" ? String(v) : typeof v === "string" ? v.toLowerCase() : v),
      z.enum(INCREMENTAL_LISTING_MODES, {
        error: (issue) =>
          `must be "auto", "true" or "false" (Databricks' cloudFiles.useIncrementalListing; true and false may be booleans), not ${JSON.stringify(issue.input)}`,
      }),
    )
    .optional(),
  /** Malformed records fail the batch (default) or go to the dataset's `_quarantine` table. */
  bad_records: caseInsensitiveEnum(BAD_RECORDS_MODES, (v) => v.toLowerCase()).default("fail"),
  /** Where a fresh checkpoint starts reading a Delta source (stream or delta). */
  starting_version: z
    .number()
    .int({ error: "must be a whole number" })
    .nonnegative({ error: "must be 0 or more" })
    .optional(),
  starting_timestamp: timestampSchema.optional(),
  /**
   * A stream or delta source reads the table's change data feed (Databricks' `readChangeFeed`): every
   * commit's inserted, updated (pre and post image) and deleted rows, with `_change_type`,
   * `_commit_version` and `_commit_timestamp`. @default true for the target of an AUTO CDC flow
   */
  read_change_feed: z.boolean().optional(),
});

/** `10 minutes`, `interval 1 hour`: a positive duration (units millisecond to week). */
const delaySchema = z.string().refine((v) => (parseInterval(v) ?? 0) > 0, {
  error: (issue) =>
    `${JSON.stringify(issue.input)} is not a delay: write a number and a unit, e.g. "10 minutes" or "1 hour"`,
});

/**
 * The event-time watermark of the flow's source (Databricks SQL `WATERMARK <column> DELAY OF
 * INTERVAL …`): the newest event time seen minus `delay`, advanced per batch. Rows older than it are
 * dropped (and counted), and state older than it is let go.
 */
export const watermarkSchema = strictObject({
  column: columnNameSchema(),
  delay: delaySchema,
});

/**
 * Deduplication across batches (Spark's `dropDuplicates(keys)`): a row whose key was seen in this or
 * any earlier batch is dropped. `within_watermark` keeps a key only until the watermark reaches its
 * event time plus the delay (Spark's `dropDuplicatesWithinWatermark`), so the state stays bounded.
 */
export const dropDuplicatesSchema = strictObject({
  keys: z.array(columnNameSchema()).min(1, { error: "drop_duplicates needs at least one key column" }),
  within_watermark: z.boolean().default(false),
});

/**
 * The second stream of a stream-stream join (Spark's `streamA.join(streamB, …)`): another streaming
 * table of this pipeline, read incrementally beside `source` and named in the flow's SQL by its
 * dataset name. Both streams need a watermark and the join condition an event-time range, so the
 * join's state can be let go (stream-join.ts).
 */
export const joinStreamSchema = strictObject({
  /** A streaming table of this pipeline. */
  stream: identifierSchema("dataset"),
  /** The watermark of the joined stream (the flow's own `watermark` is `source`'s). */
  watermark: watermarkSchema.optional(),
});

export const flowSchema = strictObject({
  name: identifierSchema("flow name"),
  source: sourceSchema,
  /** A SELECT over `source` (the micro-batch) and, for static joins, other datasets by name. */
  sql: sqlSchema,
  /** In a table written by several flows: the SQL predicate selecting the rows this flow owns. */
  owns: sqlSchema.optional(),
  options: flowOptionsSchema.optional(),
  watermark: watermarkSchema.optional(),
  drop_duplicates: dropDuplicatesSchema.optional(),
  /** A stream-stream join: the second stream the SQL joins `source` with. */
  join: joinStreamSchema.optional(),
  /** Apply the SQL's rows as change events to an SCD type 1 or 2 target (auto-cdc-schema.ts). */
  auto_cdc: autoCdcSchema.optional(),
}).superRefine((flow, ctx) => {
  if (flow.drop_duplicates?.within_watermark && !flow.watermark) {
    ctx.addIssue({
      code: "custom",
      path: ["drop_duplicates", "within_watermark"],
      params: { code: DEFINITION_ISSUE_CODES.watermarkRequired },
      message:
        'within_watermark needs a watermark: add watermark: {column: "<event time column>", delay: "10 minutes"} to the flow, or drop within_watermark to keep every key',
    });
  }
  if (flow.join) {
    const missing = [
      ...(flow.watermark
        ? []
        : [`watermark: {column: "<event time column of source>", delay: "10 minutes"}`]),
      ...(flow.join.watermark
        ? []
        : [`join.watermark: {column: "<event time column of ${flow.join.stream}>", delay: "10 minutes"}`]),
    ];
    if (missing.length > 0)
      ctx.addIssue({
        code: "custom",
        path: flow.watermark ? ["join", "watermark"] : ["watermark"],
        params: { code: DEFINITION_ISSUE_CODES.joinWatermarkRequired },
        message: `a stream-stream join needs a watermark on both streams, so its state can be let go: add ${missing.join(" and ")}`,
      });
    for (const key of ["drop_duplicates", "auto_cdc"] as const) {
      if (flow[key] !== undefined)
        ctx.addIssue({
          code: "custom",
          path: [key],
          params: { code: DEFINITION_ISSUE_CODES.streamJoin },
          message: `${key} does not apply to a stream-stream join flow yet: put it on a flow upstream of the join (or downstream of it)`,
        });
    }
  }
  if (flow.auto_cdc) {
    for (const key of ["watermark", "drop_duplicates"] as const) {
      if (flow[key] !== undefined)
        ctx.addIssue({
          code: "custom",
          path: [key],
          message: `${key} does not apply to an AUTO CDC flow (its events are ordered by sequence_by, and a duplicate event is applied once): remove it, or put it on the flow that writes the change feed upstream`,
        });
    }
  }
  if (flow.auto_cdc && flow.owns !== undefined) {
    ctx.addIssue({
      code: "custom",
      path: ["owns"],
      message:
        "owns does not apply to an AUTO CDC flow: its rows are owned by key (a refresh re-applies every change), so remove owns",
    });
  }
  const options = flow.options;
  const starting = (["starting_version", "starting_timestamp"] as const).filter(
    (key) => options?.[key] !== undefined,
  );
  if (starting.length === 2) {
    ctx.addIssue({
      code: "custom",
      path: ["options", "starting_timestamp"],
      message: "set starting_version or starting_timestamp, not both",
    });
  }
  if (
    options?.read_change_feed !== undefined &&
    flow.source.type !== "stream" &&
    flow.source.type !== "delta"
  ) {
    ctx.addIssue({
      code: "custom",
      path: ["options", "read_change_feed"],
      message: `read_change_feed applies to stream and delta sources (Delta tables' change data feeds); ${flow.source.type} sources have none`,
    });
  }
  if (options?.use_incremental_listing !== undefined && flow.source.type !== "auto_loader") {
    ctx.addIssue({
      code: "custom",
      path: ["options", "use_incremental_listing"],
      message: `use_incremental_listing applies to auto_loader sources (how their path is listed); a ${flow.source.type} source lists no files: remove it`,
    });
  }
  if (flow.source.type === "auto_loader") {
    for (const key of starting) {
      ctx.addIssue({
        code: "custom",
        path: ["options", key],
        message: `${key} applies to stream and delta sources (table versions and commit times); an auto_loader source reads every file under its path`,
      });
    }
  }
  const eventStream = flow.source.type === "kafka" || flow.source.type === "kinesis";
  if (eventStream) {
    const where = flow.source.type === "kafka" ? "source.starting_offsets" : "source.starting_position";
    for (const key of starting) {
      ctx.addIssue({
        code: "custom",
        path: ["options", key],
        message: `${key} applies to stream and delta sources; a ${flow.source.type} source starts where ${where} says`,
      });
    }
    if (options?.max_bytes_per_batch !== undefined) {
      ctx.addIssue({
        code: "custom",
        path: ["options", "max_bytes_per_batch"],
        message: `max_bytes_per_batch applies to auto_loader, stream and delta sources (a ${flow.source.type} batch's bytes are known only once read): bound it with max_offsets_per_batch`,
      });
    }
  } else if (options?.max_offsets_per_batch !== undefined) {
    ctx.addIssue({
      code: "custom",
      path: ["options", "max_offsets_per_batch"],
      message:
        "max_offsets_per_batch applies to kafka and kinesis sources: use max_files_per_batch or max_rows_per_batch",
    });
  }
});

/**
 * A data-quality expectation (Databricks' `CONSTRAINT name EXPECT (condition) [ON VIOLATION …]`):
 * a row for which `condition` is false is kept and counted (`warn`), dropped (`drop`), or fails the
 * update (`fail`).
 */
export const EXPECTATION_VIOLATIONS = ["warn", "drop", "fail"] as const;
export const expectationSchema = strictObject({
  name: z.string().trim().min(1, { error: "an expectation needs a name" }),
  condition: sqlSchema,
  on_violation: z.enum(EXPECTATION_VIOLATIONS).default("warn"),
});

const tableFields = {
  name: identifierSchema("dataset name"),
  reset_mode: resetModeSchema,
  partition_by: z.array(columnNameSchema()).optional(),
  /** Delta table properties (`delta.appendOnly`, `delta.logRetentionDuration`, …). */
  properties: z.record(z.string().min(1), z.string()).optional(),
  expectations: z.array(expectationSchema).optional(),
};

export const streamingTableSchema = strictObject({
  type: z.literal("streaming_table"),
  ...tableFields,
  flows: z.array(flowSchema).min(1, { error: "a streaming_table needs at least one flow" }),
});

export const materializedViewSchema = strictObject({
  type: z.literal("materialized_view"),
  ...tableFields,
  sql: sqlSchema,
});

export const viewSchema = strictObject({
  type: z.literal("view"),
  name: identifierSchema("dataset name"),
  /** A view stores nothing, so only DROP applies (semantics.md "Refresh and reset"). */
  reset_mode: resetModeSchema.refine((mode) => mode === "DROP", {
    error: "TRUNCATE does not apply to a view (a view stores no data): use DROP or leave reset_mode out",
  }),
  sql: sqlSchema,
});

export const datasetSchema = z.discriminatedUnion("type", [
  streamingTableSchema,
  materializedViewSchema,
  viewSchema,
]);

export const pipelineDefinitionSchema = strictObject({
  /** A display name; it never reaches a storage key (the pipeline id does). */
  name: z
    .string()
    .trim()
    .min(1, { error: "name must not be empty" })
    .max(256, { error: "name must be at most 256 characters" }),
  catalog: identifierSchema("catalog"),
  schema: identifierSchema("schema"),
  /** Pipeline settings as strings (`pipelines.rewind.enabled: "true"`), as Databricks takes them. */
  configuration: z
    .record(
      z.string().min(1),
      z.string({
        error: (issue) => `configuration values are strings: quote it (e.g. "${String(issue.input)}")`,
      }),
    )
    .default({}),
  continuous: z.boolean().default(false),
  datasets: z.array(datasetSchema).min(1, { error: "a pipeline needs at least one dataset" }),
});

export type FlowOptions = z.infer<typeof flowOptionsSchema>;
export type FlowDefinition = z.infer<typeof flowSchema>;
export type WatermarkDefinition = z.infer<typeof watermarkSchema>;
export type DropDuplicatesDefinition = z.infer<typeof dropDuplicatesSchema>;
export type StreamingTableDefinition = z.infer<typeof streamingTableSchema>;
export type MaterializedViewDefinition = z.infer<typeof materializedViewSchema>;
export type ViewDefinition = z.infer<typeof viewSchema>;
export type DatasetDefinition = z.infer<typeof datasetSchema>;
export type DatasetType = DatasetDefinition["type"];
export type ExpectationDefinition = z.infer<typeof expectationSchema>;
export type ResetMode = (typeof RESET_MODES)[number];
export type PipelineDefinition = z.infer<typeof pipelineDefinitionSchema>;
