import type { ChangeType } from "../delta/index.ts";
import type { KafkaSource } from "../pipeline/source-schema.ts";
import type { RecordFormat } from "./record-reader.ts";

/**
 * A planned batch's input as data, for an engine that reads it itself (the Spark engine): what the
 * DuckDB path lands into its sandbox, named instead of read. Planning stays Ebb's (flow-source.ts).
 */
export type PlannedInput =
  | {
      readonly kind: "files";
      /** The auto_loader's location (`s3://…` or a local folder) and the batch's keys under it. */
      readonly location: string;
      readonly keys: readonly string[];
      readonly format: RecordFormat;
      readonly schema: Readonly<Record<string, string>> | undefined;
      /** The offset did not move (a join batch whose new rows are the joined stream's): columns, no rows. */
      readonly columnsOnly?: true;
    }
  | {
      readonly kind: "table";
      /** A dataset of this pipeline, or a `delta` source's path. */
      readonly upstream: { readonly dataset: string } | { readonly path: string };
      readonly schemaString: string;
      readonly partitionColumns: readonly string[];
      /** Row slices of data files (paths relative to the table root); none when it reads `changeFeed`. */
      readonly slices: readonly {
        readonly path: string;
        readonly partitionValues: Readonly<Record<string, string | null>>;
        readonly firstRow: number;
        readonly endRow: number;
        readonly fileRows: number;
      }[];
      readonly rows: number;
      /**
       * A reader of the table's change data feed: the files of its planned versions' change rows, as
       * the DuckDB engine reads them (delta/read/change-data-feed.ts `changeRelationSql`): a `cdc`
       * file carries its own `_change_type` (`changeType` null), an added or removed data file's rows
       * are all of `changeType`; every row gets its commit's version and timestamp.
       */
      readonly changeFeed?: readonly PlannedChangeFile[];
      /** The upstream's file retention, which a change file VACUUM removed before the job read it names. */
      readonly changeFeedRetention?: string;
      readonly newestUpstreamTimestamp?: number;
      readonly skippedRestores: readonly { readonly version: number; readonly restoredVersion: number }[];
    }
  | {
      readonly kind: "kafka";
      /** The flow's source: the broker's address and security, the key's and value's formats. */
      readonly source: KafkaSource;
      /** Each partition's planned offsets, `from` inclusive, `until` exclusive (kafka-batch-plan.ts). */
      readonly ranges: readonly KafkaOffsetRange[];
    };

/** The offsets a batch reads of one partition: exactly those the DuckDB path fetches (kafka-source.ts). */
export interface KafkaOffsetRange {
  readonly topic: string;
  readonly partition: number;
  readonly from: number;
  readonly until: number;
}

/** One file of a change feed batch (delta/read/change-data-feed.ts `ChangeFile`). */
export interface PlannedChangeFile {
  /** Log path (URI-encoded), relative to the table root. */
  readonly path: string;
  readonly partitionValues: Readonly<Record<string, string | null>>;
  readonly version: number;
  /** The commit's timestamp (epoch ms), as Ebb dates it (delta/log/commit-file.ts `commitTimestamp`). */
  readonly timestamp: number;
  readonly changeType: ChangeType | null;
}
