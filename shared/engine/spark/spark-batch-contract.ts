import { z } from "zod";
import { OP } from "../auto-cdc/cdc-statements.ts";
import type { CdcBatchReduction } from "../auto-cdc/batch-reduction.ts";
import { BUCKET_HASHES, type BucketHash } from "../../state/bucket-hash.ts";
import type { StateSchema } from "../../state/state-schema.ts";
import { sparkAttemptFolder } from "./spark-job-folders.ts";
import type { SparkKafkaInput } from "./spark-kafka-input.ts";

/**
 * What Ebb hands a Spark batch and what the batch hands back (functions/spark/ebb_spark_batch.py reads
 * the one and writes the other): the request says what to compute, never what to commit; the
 * manifest says what was written, and Ebb alone commits it (micro-batch.ts step 4).
 */

/** The planned input of a batch, as URIs the job reads. */
export type SparkBatchInput =
  | {
      /** An auto_loader batch: these files, in this format, with the flow's declared schema if any. */
      readonly kind: "files";
      readonly format: "json" | "csv" | "parquet";
      readonly schema: Readonly<Record<string, string>> | null;
      readonly uris: readonly string[];
      /** Read for their columns only: the batch takes no row of them (planned-input.ts). */
      readonly columnsOnly?: boolean;
    }
  | {
      /** A `stream` batch: row slices of the upstream table's data files, read with its schema. */
      readonly kind: "table";
      readonly schemaString: string;
      readonly partitionColumns: readonly string[];
      readonly slices: readonly {
        readonly uri: string;
        readonly partitionValues: Readonly<Record<string, string | null>>;
        readonly firstRow: number;
        readonly endRow: number;
        readonly fileRows: number;
      }[];
      /**
       * A change feed batch (its `slices` empty): each file's rows with the table's columns and
       * `_change_type` (the file's own column when `changeType` is null), `_commit_version` and
       * `_commit_timestamp` (epoch ms) as the DuckDB engine reads them.
       */
      readonly changes?: readonly {
        readonly uri: string;
        readonly partitionValues: Readonly<Record<string, string | null>>;
        readonly version: number;
        readonly timestampMs: number;
        readonly changeType: string | null;
      }[];
    }
  /** A `kafka` batch: each partition's planned offsets, read from the broker by the job. */
  | SparkKafkaInput;

/**
 * A dataset the SQL reads: a table as the data files of the version Ebb planned (never Delta's
 * time travel, which would also reach versions a RESTORE abandoned), or a view as its SQL.
 */
export type SparkSnapshotRead =
  | {
      readonly kind: "table";
      readonly name: string;
      readonly schemaString: string;
      readonly partitionColumns: readonly string[];
      readonly files: readonly {
        readonly uri: string;
        readonly partitionValues: Readonly<Record<string, string | null>>;
      }[];
    }
  | { readonly kind: "view"; readonly name: string; readonly sql: string };

/** One expectation of the target dataset, evaluated by the job as the DuckDB engine does (expectations.ts). */
export interface SparkExpectation {
  readonly name: string;
  /** Spark SQL over the flow's rows. */
  readonly condition: string;
  readonly onViolation: "warn" | "drop" | "fail";
}

export interface SparkBatchRequest {
  readonly flow: string;
  readonly dataset: string;
  /** The flow's SQL, over the temp view `source` (and `reads`, by their names). */
  readonly sql: string;
  readonly txn: { readonly appId: string; readonly version: number };
  /** The planned input; none for a materialized view's recompute, which reads only `reads`. */
  readonly input?: SparkBatchInput;
  /**
   * The other datasets the SQL reads (snapshot reads), registered as temp views under their names
   * before it runs, in this order (a view after what it reads): spark-snapshot-reads.ts.
   */
  readonly reads?: readonly SparkSnapshotRead[];
  /** A stream-stream join's second stream: its planned input, loaded beside `input`. */
  readonly joinedInput?: SparkBatchInput;
  /** The dataset's expectations: the job counts them, drops and fails as they say. */
  readonly expectations?: readonly SparkExpectation[];
  /**
   * An AUTO CDC flow's event classification: the job evaluates `apply_as_truncates` and
   * `apply_as_deletes` (Spark SQL over the flow's rows) and stages each row's kind in `CDC_OP_COLUMN`;
   * with `reduce`, it stages only the events that can still decide the target, ties at one
   * sequence broken as the apply breaks them (auto-cdc/batch-reduction.ts).
   */
  readonly cdc?: {
    readonly deletes?: string;
    readonly truncates?: string;
    readonly reduce?: CdcBatchReduction;
    /** The job applies the events itself (SCD type 1), unless it answers why not: see the type. */
    readonly apply?: SparkCdcApplyRequest;
  };
  readonly output: {
    /** The table's root folder. */
    readonly tableUri: string;
    /** This attempt's folder under the table root; its files are committed from there. */
    readonly stagingPath: string;
    /**
     * The table's partition columns: the job writes Hive-style folders (`col=value/`) under the
     * staging folder, each value spelled as Delta's `partitionValues` spell it.
     */
    readonly partitionColumns: readonly string[];
  };
  /** Where the job writes its manifest (the bucket key `manifestKey` names). */
  readonly manifestUri: string;
  /** A stateful flow's operators and the parent state version they continue (spark-state.ts). */
  readonly state?: SparkStateRequest;
  /**
   * A materialized view's columns as the DuckDB recompute types them (a Delta schema's JSON,
   * spark-view-schema.ts): the job casts the SQL's rows to them by position, under their names.
   */
  readonly outputSchema?: string;
}

/**
 * An AUTO CDC batch the job applies (functions/spark/ebb_spark_cdc_apply.py, as auto-cdc/apply-changes.ts
 * does in DuckDB): Ebb plans (the state version, the target's files), the job computes the MERGE and
 * the next `cdc_keys` buckets; its manifest's `cdcApplied` says it did. A batch it cannot apply (its
 * own checks) is staged as events for Ebb's apply, as without `apply`.
 */
export interface SparkCdcApplyRequest {
  /** The layout's parts that need no output columns (the job resolves the written ones as `reduce` does). */
  readonly layout: {
    readonly scdType: 1 | 2;
    readonly keys: readonly string[];
    readonly sequence: readonly string[];
    readonly ignoreNullUpdates: boolean;
    /** SCD type 2: which written columns start a new version when they change (cdc-layout.ts). */
    readonly trackHistoryColumnList?: readonly string[];
    readonly trackHistoryExceptColumnList?: readonly string[];
  };
  /** The parent state's truncate sequence (DuckDB JSON text), or null. */
  readonly truncate: string | null;
  /** The batch's apply time (epoch µs) and the time before which a lone tombstone expired. */
  readonly nowMicros: number;
  readonly expiredBeforeMicros: number;
  /** The types whose tie hash both engines spell alike (auto-cdc/batch-reduction.ts `TIE_HASH_TYPES`). */
  readonly tieTypes: readonly string[];
  /** The flow's state folder, this attempt's staging folder for state files, the `cdc_keys` table. */
  readonly state: {
    readonly stateUri: string;
    readonly stagingUri: string;
    readonly seq: number;
  } & SparkStateTableRequest;
  /** The target as Ebb read it: its columns (null: no table yet) and live files. */
  readonly target: {
    readonly columns: readonly string[] | null;
    readonly partitioned: boolean;
    readonly deletionVectors: boolean;
    /** The table writes its change feed (a new table will: AUTO CDC targets have it on). */
    readonly changeData: boolean;
    readonly files: readonly { readonly uri: string; readonly path: string }[];
  };
}

/** A state table of the parent version, its files as URIs the job reads (state-manifest.ts). */
export interface SparkStateTable {
  readonly schema: StateSchema;
  readonly buckets: number;
  readonly hash: BucketHash;
  readonly parts: Readonly<
    Record<string, { readonly files: readonly string[]; readonly rows: number; readonly minTime?: number }>
  >;
}

export interface SparkStateRequest {
  /** The flow's state folder: the job moves each state file it writes there, under a fresh name. */
  readonly stateUri: string;
  /** This attempt's folder for the state files before they are moved. */
  readonly stagingUri: string;
  /** The batch's seq (the state files' names start with it). */
  readonly seq: number;
  /** The watermark and the one the parent version left (epoch µs; null before any event). */
  readonly watermark: {
    readonly column: string;
    readonly delayMicros: number;
    readonly previousMicros: number | null;
  } | null;
  readonly dedup: {
    readonly keys: readonly string[];
    readonly withinWatermark: boolean;
    /** The parent's table; null before the flow's first batch (the job derives its schema and hash). */
    readonly stored: SparkStateTable | null;
    /** Buckets of a new table. */
    readonly buckets: number;
    /** Buckets whose next write is a snapshot (state-manifest.ts `snapshotDue`). */
    readonly snapshotDue: readonly number[];
  } | null;
  /** A windowed aggregation (window-aggregation.ts): its window, its partials' SQL and its state table. */
  readonly window?: {
    readonly column: string;
    readonly sizeMicros: number;
    readonly slideMicros: number;
    /** Spark SQL of the batch's partials per window and key, over `__ebb_window_rows`. */
    readonly partialSql: string;
    /** How many grouping keys besides the window (`__ebb_g0`…). */
    readonly groupKeys: number;
    readonly aggregates: readonly { readonly kind: string }[];
    readonly stored: SparkStateTable | null;
    readonly buckets: number;
    readonly snapshotDue: readonly number[];
  } | null;
  /**
   * A full recompute of a materialized view kept incrementally (spark-view-state.ts;
   * functions/spark/ebb_spark_view.py): its partials' SQL over the input `reads` registers, the
   * shape of its partials, and the buckets of its new `groups` table. The request's `sql` is its
   * final SQL, over the merged partials the job leaves in `__ebb_view_final`.
   */
  readonly view?: {
    /** Spark SQL of the partials per key, over the view's input by its name. */
    readonly partialSql: string;
    /** How many grouping keys (`__ebb_g0`…). */
    readonly groupKeys: number;
    readonly aggregates: readonly { readonly kind: string }[];
    readonly buckets: number;
  } | null;
  /**
   * A stream-stream join (stream-join.ts; functions/spark/ebb_spark_join.py): `source` (the batch's
   * `input`) and the joined stream (its `joinedInput`), each side's watermark, the compiled plan's SQL
   * printed as Spark SQL, and the parent's waiting rows of each side.
   */
  readonly join?: {
    readonly type: "inner" | "left";
    /** The joined stream's name in the SQL (a temp view of it). */
    readonly stream: string;
    readonly left: { readonly column: string; readonly delayMicros: number };
    readonly right: { readonly column: string; readonly delayMicros: number };
    /** Each side's watermark the parent left (epoch µs). */
    readonly previous: { readonly left?: number; readonly right?: number };
    /** Bounds of `source time - joined time` (µs). */
    readonly range: { readonly loMicros: number; readonly hiMicros: number };
    /** The flow's SQL (for a LEFT join's unmatched rows), its INNER form (pairs) and its match SQL. */
    readonly sql: string;
    readonly innerSql: string;
    readonly matchSql: string;
    readonly leftTable: SparkStateTableRequest;
    readonly rightTable: SparkStateTableRequest;
  } | null;
}

/** A state table the job reads and writes: the parent's (null before it has one) and its buckets. */
export interface SparkStateTableRequest {
  readonly stored: SparkStateTable | null;
  readonly buckets: number;
  readonly snapshotDue: readonly number[];
}

const stateColumnSchema = z.object({ name: z.string().min(1), type: z.string().min(1) });

/** What the job did to the state: Ebb writes the next version's manifest from it (spark-state.ts). */
export const sparkStateResultSchema = z.object({
  dropped: z.number().int().nonnegative(),
  duplicates: z.number().int().nonnegative(),
  watermarkMicros: z.number().nullable(),
  /** A windowed aggregation: the windows this batch completed (and wrote). */
  windowsEmitted: z.number().int().nonnegative().optional(),
  /** A stream-stream join: its pairs, the unmatched left rows it wrote, each side's watermark after. */
  join: z
    .object({
      pairs: z.number().int().nonnegative(),
      leftOuterRows: z.number().int().nonnegative().optional(),
      watermarks: z.object({ left: z.number().optional(), right: z.number().optional() }),
    })
    .optional(),
  tables: z.record(
    z.string(),
    z.object({
      schema: z.object({ key: z.array(stateColumnSchema).min(1), value: z.array(stateColumnSchema) }),
      hash: z.enum(BUCKET_HASHES),
      buckets: z.number().int().positive(),
      writes: z.array(
        z.object({
          bucket: z.number().int().nonnegative(),
          kind: z.enum(["changelog", "snapshot"]),
          rows: z.number().int().nonnegative(),
          minTime: z.number().optional(),
          /** The file's name in the flow's state folder, and its size. */
          file: z
            .object({ name: z.string().regex(/^[\w.-]+\.parquet$/), bytes: z.number().int().nonnegative() })
            .optional(),
        }),
      ),
    }),
  ),
});
export type SparkStateResult = z.infer<typeof sparkStateResultSchema>;

const succeededSchema = z.object({
  version: z.literal(1),
  status: z.literal("succeeded"),
  flow: z.string(),
  txn: z.object({ appId: z.string(), version: z.number().int().nonnegative() }),
  /** The rows' schema, Delta's schema JSON. */
  schemaString: z.string(),
  files: z.array(
    z.object({
      /** Relative to the table root. */
      path: z.string().min(1),
      /** The file's partition values, as its `add` action records them (absent: unpartitioned). */
      partitionValues: z.record(z.string(), z.string().nullable()).default({}),
      size: z.number().int().nonnegative(),
      /** Delta's per-file statistics JSON (numRecords, nullCount, minValues, maxValues). */
      stats: z.string(),
    }),
  ),
  /**
   * The folder under the table root this job run wrote its files into: its own in the attempt's
   * `stagingPath` (a job run again for the same request writes beside the first run's files).
   */
  stagingPath: z.string().min(1).optional(),
  rowsIn: z.number().int().nonnegative(),
  rowsOut: z.number().int().nonnegative(),
  metrics: z.record(z.string(), z.unknown()),
  /** The expectations' counts over the flow's rows (rowsOut is what `drop` kept). */
  dataQuality: z
    .object({
      droppedRecords: z.number().int().nonnegative(),
      expectations: z.array(
        z.object({
          name: z.string(),
          passedRecords: z.number().int().nonnegative(),
          failedRecords: z.number().int().nonnegative(),
        }),
      ),
    })
    .optional(),
  sparkApplicationId: z.string().optional(),
  /** A `kafka` batch: its newest record's timestamp (epoch ms), which the commit is dated after. */
  newestRecordMs: z.number().int().optional(),
  state: sparkStateResultSchema.optional(),
  /** An AUTO CDC batch the job applied: the files its MERGE rewrote (paths, as the log names them). */
  removes: z.array(z.string().min(1)).optional(),
  /** The MERGE's change-data files (relative to the table root). */
  changeData: z.array(z.object({ path: z.string().min(1), size: z.number().int().nonnegative() })).optional(),
  cdcApplied: z
    .object({
      /** The flow's output columns (the layout Ebb checks) and the sequence's DuckDB type. */
      output: z.array(z.string()),
      sequenceType: z.string().min(1),
      rows: z.object({
        inserted: z.number().int().nonnegative(),
        updated: z.number().int().nonnegative(),
        deleted: z.number().int().nonnegative(),
      }),
      copied: z.number().int().nonnegative(),
      /** The truncate sequence the batch moved up to (DuckDB JSON text). */
      truncate: z.string().optional(),
    })
    .optional(),
});

/**
 * Why a Spark batch failed: Spark could not analyse the SQL, could not read the input, an
 * expectation's condition does not apply to the rows, a `fail` expectation failed, or else.
 */
export const sparkFailureSchema = z.object({
  status: z.literal("failed"),
  kind: z.enum(["analysis", "input", "condition", "expectation", "job"]),
  message: z.string(),
  /** `expectation`: its name, the failed rows and one of them (JSON); `condition`: its name. */
  details: z
    .object({
      expectation: z.string(),
      failedRecords: z.number().int().nonnegative().optional(),
      row: z.string().optional(),
    })
    .passthrough()
    .optional(),
});

export const sparkManifestSchema = z.discriminatedUnion("status", [
  succeededSchema,
  sparkFailureSchema.extend({ version: z.literal(1) }),
]);
export type SparkManifest = z.infer<typeof succeededSchema>;
export type SparkFailure = z.infer<typeof sparkFailureSchema>;

/** The temp view the job leaves a stream-stream join's rows in (the batch's SQL reads it). */
export const JOIN_OUTPUT_VIEW = "__ebb_join_out";

/**
 * The staged rows' column holding an AUTO CDC event's kind (`upsert`, `delete`, `truncate`), as the
 * job classified it (auto-cdc/cdc-statements.ts `OP`: the apply reads it as is).
 */
export const CDC_OP_COLUMN = OP;

/** The bucket key of batch `seq`'s manifest, written by the job and read by the commit. */
export function manifestKey(pipelineId: string, flow: string, seq: number, attempt: string): string {
  return `${sparkAttemptFolder(pipelineId, flow, seq, attempt)}manifest.json`;
}

/** The bucket key of the request beside `manifestKey` (on AWS the job reads it from there). */
export function requestKeyOf(manifestKey: string): string {
  return manifestKey.replace(/manifest\.json$/, "request.json");
}

/**
 * The folder under the table root an attempt of batch `seq` writes its data files into. Not hidden
 * (no leading `_`): its files are committed from there, and VACUUM removes what a dead attempt left.
 */
export function stagingPath(seq: number, attempt: string): string {
  return `spark/${seq}-${attempt}`;
}
