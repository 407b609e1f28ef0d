/**
 * File naming in `_delta_log/`: the one place that turns versions into keys and keys back into
 * versions (PROTOCOL.md "Delta Log Entries", "Checkpoints", "Last Checkpoint File"). Keys are
 * relative to the table root.
 */

export const LOG_DIR = "_delta_log/";
export const LAST_CHECKPOINT_KEY = `${LOG_DIR}_last_checkpoint`;

const VERSION_DIGITS = 20;
const PART_DIGITS = 10;

/** `_delta_log/00000000000000000042.json` */
export function commitKey(version: number): string {
  return `${LOG_DIR}${padVersion(version)}.json`;
}

/** `_delta_log/00000000000000000042.checkpoint.parquet` (a classic, single-file checkpoint). */
export function checkpointKey(version: number): string {
  return `${LOG_DIR}${padVersion(version)}.checkpoint.parquet`;
}

/** Part `part` (1-based) of `parts`: `_delta_log/<v>.checkpoint.0000000001.0000000003.parquet`. */
export function multiPartCheckpointKey(version: number, part: number, parts: number): string {
  const pad = (n: number) => String(n).padStart(PART_DIGITS, "0");
  return `${LOG_DIR}${padVersion(version)}.checkpoint.${pad(part)}.${pad(parts)}.parquet`;
}

/** Every key of the checkpoint at `version` with `parts` parts (1 = classic). */
export function checkpointKeys(version: number, parts = 1): string[] {
  if (parts <= 1) return [checkpointKey(version)];
  return Array.from({ length: parts }, (_, i) => multiPartCheckpointKey(version, i + 1, parts));
}

/** `_delta_log/00000000000000000042.crc` (PROTOCOL.md "Version Checksum File"). */
export function checksumKey(version: number): string {
  return `${LOG_DIR}${padVersion(version)}.crc`;
}

/** The 20-digit zero-padded version used in every log file name. */
export function padVersion(version: number): string {
  if (!Number.isSafeInteger(version) || version < 0) {
    throw new RangeError(`a Delta version is a non-negative integer, got ${version}`);
  }
  return String(version).padStart(VERSION_DIGITS, "0");
}

/** What a key under `_delta_log/` is, as far as log replay cares. */
export type LogFile =
  | { readonly kind: "commit"; readonly version: number }
  | { readonly kind: "checkpoint"; readonly version: number }
  | {
      readonly kind: "checkpoint-part";
      readonly version: number;
      readonly part: number;
      readonly parts: number;
    }
  | { readonly kind: "uuid-checkpoint"; readonly version: number; readonly format: "json" | "parquet" }
  | { readonly kind: "compaction"; readonly version: number; readonly endVersion: number }
  | { readonly kind: "checksum"; readonly version: number }
  | { readonly kind: "last-checkpoint" };

const COMMIT = /^(\d{20})\.json$/;
const CLASSIC_CHECKPOINT = /^(\d{20})\.checkpoint\.parquet$/;
const MULTI_PART_CHECKPOINT = /^(\d{20})\.checkpoint\.(\d{10})\.(\d{10})\.parquet$/;
const UUID_CHECKPOINT = /^(\d{20})\.checkpoint\.[0-9a-fA-F-]{36}\.(json|parquet)$/;
const COMPACTION = /^(\d{20})\.(\d{20})\.compacted\.json$/;
const CHECKSUM = /^(\d{20})\.crc$/;

/**
 * Parses a key (relative to the table root, or just the file name) into what it names in the log,
 * or `undefined` for anything else: `.crc` sidecars of Hadoop (`.0000.json.crc`), temp files,
 * `_staged_commits/`, `_sidecars/` and keys outside `_delta_log/`.
 */
export function parseLogKey(key: string): LogFile | undefined {
  const name = key.startsWith(LOG_DIR) ? key.slice(LOG_DIR.length) : key;
  if (name.includes("/")) return undefined;
  if (name === "_last_checkpoint") return { kind: "last-checkpoint" };
  let m: RegExpExecArray | null;
  if ((m = COMMIT.exec(name))) return { kind: "commit", version: Number(m[1]) };
  if ((m = CLASSIC_CHECKPOINT.exec(name))) return { kind: "checkpoint", version: Number(m[1]) };
  if ((m = MULTI_PART_CHECKPOINT.exec(name))) {
    return { kind: "checkpoint-part", version: Number(m[1]), part: Number(m[2]), parts: Number(m[3]) };
  }
  if ((m = UUID_CHECKPOINT.exec(name))) {
    return { kind: "uuid-checkpoint", version: Number(m[1]), format: m[2] as "json" | "parquet" };
  }
  if ((m = COMPACTION.exec(name))) {
    return { kind: "compaction", version: Number(m[1]), endVersion: Number(m[2]) };
  }
  if ((m = CHECKSUM.exec(name))) return { kind: "checksum", version: Number(m[1]) };
  return undefined;
}
