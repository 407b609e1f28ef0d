import { listAll, type ObjectInfo, type ObjectStore } from "../../object-store/object-store.ts";
import { ObjectNotFoundError } from "../../object-store/errors.ts";
import { LAST_CHECKPOINT_KEY, LOG_DIR, padVersion } from "./log-paths.ts";
import { indexLogListing, type LogListing } from "./log-segment.ts";

/** The pointer in `_delta_log/_last_checkpoint` (PROTOCOL.md "Last Checkpoint File Schema"), as read. */
export interface LastCheckpointHint {
  readonly version: number;
  readonly size?: number;
  readonly parts?: number;
}

/**
 * Reads `_delta_log/_last_checkpoint`. It is only a hint: missing or unreadable gives `undefined`,
 * and the caller lists the log instead.
 */
export async function readLastCheckpointHint(store: ObjectStore): Promise<LastCheckpointHint | undefined> {
  let text: string;
  try {
    text = new TextDecoder().decode(await store.get(LAST_CHECKPOINT_KEY));
  } catch (error) {
    if (error instanceof ObjectNotFoundError) return undefined;
    throw error;
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return undefined;
  }
  return lastCheckpointHint(json);
}

/**
 * The hint's fields when they have the schema's types, else `undefined` (other fields are dropped).
 * Checked by hand, not by a zod schema: a schema's first parse in a process compiles it (2.5-3 ms of
 * CPU), which every snapshot load of a CLI call or a cold Lambda paid for three numbers.
 */
export function lastCheckpointHint(json: unknown): LastCheckpointHint | undefined {
  if (typeof json !== "object" || json === null || Array.isArray(json)) return undefined;
  const { version, size, parts } = json as Record<string, unknown>;
  if (typeof version !== "number" || !Number.isSafeInteger(version) || version < 0) return undefined;
  if (!isOptionalNumber(size) || !isOptionalNumber(parts)) return undefined;
  return { version, ...(size === undefined ? {} : { size }), ...(parts === undefined ? {} : { parts }) };
}

function isOptionalNumber(value: unknown): value is number | undefined {
  return value === undefined || (typeof value === "number" && Number.isFinite(value));
}

/**
 * Lists `_delta_log/` (from `fromVersion` on, using the zero-padded names' byte order: every file of
 * version v sorts after the bare `<v>`) and indexes it. With `throughVersion` the listing stops at the
 * first file of a later version: a read as of an old version does not list the log's whole tail.
 */
export async function listLog(
  store: ObjectStore,
  fromVersion?: number,
  throughVersion?: number,
): Promise<LogListing> {
  const objects: ObjectInfo[] = [];
  const options = {
    ...(fromVersion === undefined ? {} : { startAfter: `${LOG_DIR}${padVersion(fromVersion)}` }),
    ...(throughVersion === undefined ? {} : { pageSize: boundedPageSize(fromVersion ?? 0, throughVersion) }),
  };
  // Names past the last version's sort after its padded number (a later version, or `_last_checkpoint`).
  const past = throughVersion === undefined ? undefined : padVersion(throughVersion);
  for await (const info of listAll(store, LOG_DIR, options)) {
    if (past !== undefined && info.key.slice(LOG_DIR.length, LOG_DIR.length + past.length) > past) break;
    objects.push(info);
  }
  return indexLogListing(objects);
}

/** Files listed in one page at most (S3's own limit for `ListObjectsV2`). */
const MAX_PAGE = 1000;

/**
 * A first page sized to the versions asked for (about two files each: a commit, now and then a
 * checkpoint): reading v10 of a long log then fetches a dozen entries, not the 1,000 S3 returns by
 * default (each parsed, and on a local folder each stat'ed). Further pages follow when it is short.
 */
function boundedPageSize(fromVersion: number, throughVersion: number): number {
  return Math.min(MAX_PAGE, Math.max(0, throughVersion - fromVersion + 1) * 2 + 8);
}
