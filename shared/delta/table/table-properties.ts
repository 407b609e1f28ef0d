import type { Metadata } from "../log/actions.ts";
import { InvalidTablePropertyError } from "../errors.ts";
import { DEFAULT_TARGET_FILE_SIZE_BYTES } from "../write/data-file-writer.ts";

/**
 * The table properties the writer obeys (`metaData.configuration`, PROTOCOL.md "Table Properties"
 * and Delta's documented `delta.*` settings), parsed once with Delta's defaults.
 */
export const TABLE_PROPERTY = {
  enableChangeDataFeed: "delta.enableChangeDataFeed",
  checkpointInterval: "delta.checkpointInterval",
  logRetentionDuration: "delta.logRetentionDuration",
  deletedFileRetentionDuration: "delta.deletedFileRetentionDuration",
  appendOnly: "delta.appendOnly",
  enableExpiredLogCleanup: "delta.enableExpiredLogCleanup",
  autoCompact: "delta.autoOptimize.autoCompact",
  targetFileSize: "delta.targetFileSize",
  parquetCompressionCodec: "delta.parquet.compression.codec",
  dataSkippingNumIndexedCols: "delta.dataSkippingNumIndexedCols",
  checkpointWriteStatsAsJson: "delta.checkpoint.writeStatsAsJson",
  checkpointWriteStatsAsStruct: "delta.checkpoint.writeStatsAsStruct",
  enableInCommitTimestamps: "delta.enableInCommitTimestamps",
  inCommitTimestampEnablementVersion: "delta.inCommitTimestampEnablementVersion",
  inCommitTimestampEnablementTimestamp: "delta.inCommitTimestampEnablementTimestamp",
  /** Ebb's own: small files in a partition that trigger auto-compaction (Databricks' `minNumFiles` conf). */
  autoCompactMinNumFiles: "ebb.autoCompact.minNumFiles",
} as const;

const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;

export const DEFAULT_CHECKPOINT_INTERVAL = 10;
/** Delta's default `delta.logRetentionDuration`: `interval 30 days`. */
export const DEFAULT_LOG_RETENTION_MS = 30 * DAY_MS;
/** Delta's default `delta.deletedFileRetentionDuration`: `interval 1 week` (VACUUM's 168 hours). */
export const DEFAULT_DELETED_FILE_RETENTION_MS = 7 * DAY_MS;

/**
 * Small files in one partition before auto-compaction runs. Lower than Databricks' 50: a pipeline
 * table gains a file per update, and every read of the table pays a request per file.
 */
export const DEFAULT_AUTO_COMPACT_MIN_FILES = 10;

export interface TableProperties {
  readonly changeDataFeed: boolean;
  readonly checkpointInterval: number;
  readonly logRetentionMs: number;
  readonly deletedFileRetentionMs: number;
  readonly appendOnly: boolean;
  /** Metadata cleanup after checkpoints (Delta's default: on). */
  readonly expiredLogCleanup: boolean;
  /** Compact small files after a write (`delta.autoOptimize.autoCompact`; Delta's default: off). */
  readonly autoCompact: boolean;
  readonly targetFileSizeBytes: number;
  readonly autoCompactMinFiles: number;
  /** The data files' parquet codec, as DuckDB's COPY names it (Delta's default: snappy). */
  readonly parquetCompression: string;
  /** Leading data columns whose stats are collected (Delta's default 32; -1: every column). */
  readonly indexedColumns: number;
  /** Whether checkpoints carry `add.stats` (Delta's default: true). */
  readonly checkpointStatsAsJson: boolean;
  /** Every commit records its `inCommitTimestamp` (PROTOCOL.md "In-Commit Timestamps"). */
  readonly inCommitTimestamps: boolean;
}

/** Delta's codec names (Spark's `parquet.compression`) and DuckDB's for each. */
const PARQUET_CODECS: Readonly<Record<string, string>> = {
  uncompressed: "uncompressed",
  none: "uncompressed",
  snappy: "snappy",
  gzip: "gzip",
  zstd: "zstd",
  lz4: "lz4_raw",
  lz4_raw: "lz4_raw",
  brotli: "brotli",
};
export const DEFAULT_INDEXED_COLUMNS = 32;

/** The writer-relevant properties of a table, with Delta's defaults for those not set. */
export function tableProperties(metadata: Pick<Metadata, "configuration">): TableProperties {
  const config = metadata.configuration;
  const get = (key: string): string | undefined => config[key];
  return {
    changeDataFeed: parseBoolean(
      TABLE_PROPERTY.enableChangeDataFeed,
      get(TABLE_PROPERTY.enableChangeDataFeed),
    ),
    checkpointInterval: parseCheckpointInterval(get(TABLE_PROPERTY.checkpointInterval)),
    logRetentionMs: parseOptionalInterval(
      TABLE_PROPERTY.logRetentionDuration,
      get(TABLE_PROPERTY.logRetentionDuration),
      DEFAULT_LOG_RETENTION_MS,
    ),
    deletedFileRetentionMs: parseOptionalInterval(
      TABLE_PROPERTY.deletedFileRetentionDuration,
      get(TABLE_PROPERTY.deletedFileRetentionDuration),
      DEFAULT_DELETED_FILE_RETENTION_MS,
    ),
    appendOnly: parseBoolean(TABLE_PROPERTY.appendOnly, get(TABLE_PROPERTY.appendOnly)),
    expiredLogCleanup: parseBoolean(
      TABLE_PROPERTY.enableExpiredLogCleanup,
      get(TABLE_PROPERTY.enableExpiredLogCleanup) ?? "true",
    ),
    autoCompact: parseAutoCompact(get(TABLE_PROPERTY.autoCompact)),
    targetFileSizeBytes: parseByteSize(
      TABLE_PROPERTY.targetFileSize,
      get(TABLE_PROPERTY.targetFileSize),
      DEFAULT_TARGET_FILE_SIZE_BYTES,
    ),
    autoCompactMinFiles: parsePositiveInteger(
      TABLE_PROPERTY.autoCompactMinNumFiles,
      get(TABLE_PROPERTY.autoCompactMinNumFiles),
      DEFAULT_AUTO_COMPACT_MIN_FILES,
    ),
    parquetCompression: parseCodec(get(TABLE_PROPERTY.parquetCompressionCodec)),
    indexedColumns: parseIndexedColumns(get(TABLE_PROPERTY.dataSkippingNumIndexedCols)),
    checkpointStatsAsJson: parseBoolean(
      TABLE_PROPERTY.checkpointWriteStatsAsJson,
      get(TABLE_PROPERTY.checkpointWriteStatsAsJson) ?? "true",
    ),
    inCommitTimestamps: parseBoolean(
      TABLE_PROPERTY.enableInCommitTimestamps,
      get(TABLE_PROPERTY.enableInCommitTimestamps),
    ),
    ...refuseStatsAsStruct(get(TABLE_PROPERTY.checkpointWriteStatsAsStruct)),
  };
}

function parseCodec(value: string | undefined): string {
  if (value === undefined) return "snappy";
  const codec = PARQUET_CODECS[value.trim().toLowerCase()];
  if (!codec) {
    throw new InvalidTablePropertyError(
      TABLE_PROPERTY.parquetCompressionCodec,
      value,
      `one of ${Object.keys(PARQUET_CODECS).join(", ")}`,
    );
  }
  return codec;
}

function parseIndexedColumns(value: string | undefined): number {
  if (value === undefined) return DEFAULT_INDEXED_COLUMNS;
  const n = Number(value);
  if (!Number.isInteger(n) || n < -1) {
    throw new InvalidTablePropertyError(
      TABLE_PROPERTY.dataSkippingNumIndexedCols,
      value,
      "a whole number of columns, or -1 for every column",
    );
  }
  return n === -1 ? Number.POSITIVE_INFINITY : n;
}

/** Ebb's checkpoints carry statistics as JSON only: asking for `stats_parsed` is refused, not ignored. */
function refuseStatsAsStruct(value: string | undefined): Record<string, never> {
  if (value !== undefined && parseBoolean(TABLE_PROPERTY.checkpointWriteStatsAsStruct, value)) {
    throw new InvalidTablePropertyError(
      TABLE_PROPERTY.checkpointWriteStatsAsStruct,
      value,
      '"false": Ebb writes checkpoint statistics as JSON (add.stats), not as add.stats_parsed',
    );
  }
  return {};
}

/** Checks every known property of a configuration, so a bad value fails at create time. */
export function validateTableProperties(configuration: Readonly<Record<string, string>>): void {
  tableProperties({ configuration });
}

const INTERVAL_UNIT_MS: Readonly<Record<string, number>> = {
  week: 7 * DAY_MS,
  day: DAY_MS,
  hour: HOUR_MS,
  minute: 60_000,
  second: 1000,
  millisecond: 1,
};

/**
 * Milliseconds in a Spark calendar interval as Delta writes its durations: `interval 7 days`,
 * `interval 1 week`, `interval 168 hours`, `interval 1 day 12 hours` (the leading `interval` is
 * optional; units singular or plural, any case). Months and years are refused, as in Delta, because
 * they have no fixed length.
 */
export function parseIntervalMs(text: string): number {
  const words = text.trim().toLowerCase().split(/\s+/);
  if (words[0] === "interval") words.shift();
  if (words.length === 0 || words.length % 2 !== 0) throw new Error(`not an interval: "${text}"`);
  let total = 0;
  for (let i = 0; i < words.length; i += 2) {
    const amount = Number(words[i]);
    const unit = words[i + 1]!.replace(/s$/, "");
    const unitMs = INTERVAL_UNIT_MS[unit];
    if (!Number.isFinite(amount) || amount < 0 || unitMs === undefined) {
      throw new Error(`not an interval: "${text}" (use e.g. "interval 7 days")`);
    }
    total += amount * unitMs;
  }
  return total;
}

function parseOptionalInterval(key: string, value: string | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  try {
    return parseIntervalMs(value);
  } catch (cause) {
    throw new InvalidTablePropertyError(key, value, 'an interval such as "interval 7 days"', { cause });
  }
}

function parseBoolean(key: string, value: string | undefined): boolean {
  if (value === undefined) return false;
  const lower = value.trim().toLowerCase();
  if (lower === "true") return true;
  if (lower === "false") return false;
  throw new InvalidTablePropertyError(key, value, '"true" or "false"');
}

function parseCheckpointInterval(value: string | undefined): number {
  return parsePositiveInteger(TABLE_PROPERTY.checkpointInterval, value, DEFAULT_CHECKPOINT_INTERVAL);
}

function parsePositiveInteger(key: string, value: string | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new InvalidTablePropertyError(key, value, "a positive integer");
  return n;
}

/** Databricks also accepts `auto` (its own heuristics) and `legacy`; both mean on here. */
function parseAutoCompact(value: string | undefined): boolean {
  if (value === undefined) return false;
  const lower = value.trim().toLowerCase();
  if (lower === "auto" || lower === "legacy") return true;
  return parseBoolean(TABLE_PROPERTY.autoCompact, value);
}

const BYTE_UNITS: Readonly<Record<string, number>> = { "": 1, b: 1, kb: 1024, mb: 1024 ** 2, gb: 1024 ** 3 };

/** Bytes as Databricks writes `delta.targetFileSize`: `134217728`, `128mb`, `1gb`. */
function parseByteSize(key: string, value: string | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  const match = /^(\d+)\s*([a-z]*)$/.exec(value.trim().toLowerCase());
  const unit = match ? BYTE_UNITS[match[2]!] : undefined;
  if (!match || unit === undefined || Number(match[1]) < 1) {
    throw new InvalidTablePropertyError(key, value, 'a size in bytes such as "134217728" or "128mb"');
  }
  return Number(match[1]) * unit;
}
