import { randomUUID } from "node:crypto";
import { UnsupportedFeatureError } from "../errors.ts";

/**
 * Where the writer puts data and change-data files, and how their keys appear in the log: the one
 * place both the writer (key → log `path`) and every reader (log `path` → key) take it from.
 *
 * - Data files: `part-<uuid>.snappy.parquet` at the table root, or under Hive-style partition
 *   folders `<col>=<value>/` (PROTOCOL.md "Data Files": a convention, not a requirement; readers take
 *   partition values from the log).
 * - Change data files: `_change_data/cdc-<uuid>.snappy.parquet`, in the same partition folders
 *   (PROTOCOL.md "Change Data Files").
 * - A log `path` is the key as an RFC 2396 URI (PROTOCOL.md "Add File and Remove File"), so a `%`
 *   in a folder name appears as `%25` in the log.
 */

export const CHANGE_DATA_DIR = "_change_data/";
/** The folder name Hive and Spark use for a null partition value. */
export const NULL_PARTITION_FOLDER = "__HIVE_DEFAULT_PARTITION__";

/** A data file key: `[<partition folders>/]part-<uuid>.snappy.parquet`. */
export function newDataFileKey(
  partitionColumns: readonly string[],
  partitionValues: Readonly<Record<string, string | null>>,
  uuid: string = randomUUID(),
): string {
  return `${partitionFolder(partitionColumns, partitionValues)}part-${uuid}.snappy.parquet`;
}

/** A change data file key: `_change_data/[<partition folders>/]cdc-<uuid>.snappy.parquet`. */
export function newChangeDataFileKey(
  partitionColumns: readonly string[],
  partitionValues: Readonly<Record<string, string | null>>,
  uuid: string = randomUUID(),
): string {
  return `${CHANGE_DATA_DIR}${partitionFolder(partitionColumns, partitionValues)}cdc-${uuid}.snappy.parquet`;
}

/**
 * `col1=v1/col2=v2/` for the partition columns in table order; `""` for an unpartitioned table. A
 * null (or empty, which the protocol reads as null) value becomes `__HIVE_DEFAULT_PARTITION__`.
 */
export function partitionFolder(
  partitionColumns: readonly string[],
  partitionValues: Readonly<Record<string, string | null>>,
): string {
  return partitionColumns
    .map((column) => {
      const value = partitionValues[column];
      const folderValue =
        value === null || value === undefined || value === "" ? NULL_PARTITION_FOLDER : escapePathName(value);
      return `${escapePathName(column)}=${folderValue}/`;
    })
    .join("");
}

/**
 * Hive's path-name escaping, as Spark applies it to partition folders: characters that are unsafe in
 * a path segment (`/`, `=`, `%`, `:`, quotes, wildcards, control characters...) become `%XX`
 * (upper-case hex); everything else, including non-ASCII, stays as is.
 */
export function escapePathName(text: string): string {
  let out = "";
  for (const ch of text) {
    const code = ch.codePointAt(0)!;
    out += code < 0x80 && needsEscape(code) ? `%${code.toString(16).toUpperCase().padStart(2, "0")}` : ch;
  }
  return out;
}

const ESCAPED_PUNCTUATION = new Set([..."\"#%'*/:=?\\{[]^"].map((c) => c.charCodeAt(0)));

function needsEscape(code: number): boolean {
  return code < 0x20 || code === 0x7f || ESCAPED_PUNCTUATION.has(code);
}

/** The log `path` of a key: the key as a URI (`%` → `%25`, spaces and non-ASCII percent-encoded). */
export function toLogPath(key: string): string {
  return encodeURI(key);
}

/**
 * The storage key of a log `path`, which is a URI-encoded relative path (PROTOCOL.md "Add File and
 * Remove File"): `test%25file%25prefix-1.parquet` names the file `test%file%prefix-1.parquet`.
 * A path that is not valid percent-encoding (some old writers did not encode) is taken as is.
 */
export function decodeLogPath(path: string): string {
  // Most paths have nothing to decode (a checkpoint of a large table holds millions).
  if (!path.includes("%")) return path;
  try {
    return decodeURIComponent(path);
  } catch {
    return path;
  }
}

/** The storage key of a data file to read, named by a log `path`; absolute URIs are not read. */
export function dataFileKey(path: string): string {
  if (/^[a-zA-Z][a-zA-Z0-9+.-]*:/.test(path)) {
    throw new UnsupportedFeatureError("absolutePaths", `data file ${path} is outside the table folder`);
  }
  return decodeLogPath(path);
}
