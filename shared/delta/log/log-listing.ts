import { z } from "zod";
import { listAll, type ObjectInfo, type ObjectStore } from "../../object-store/object-store.ts";
import { ObjectNotFoundError } from "../../object-store/errors.ts";
import { LAST_CHECKPOINT_KEY, LOG_DIR, padVersion } from "./log-paths.ts";
import { indexLogListing, type LogListing } from "./log-segment.ts";

/** The pointer in `_delta_log/_last_checkpoint` (PROTOCOL.md "Last Checkpoint File Schema"), as read. */
const LastCheckpointHintSchema = z.object({
  version: z.number().int().nonnegative().max(Number.MAX_SAFE_INTEGER),
  size: z.number().optional(),
  parts: z.number().optional(),
});

export type LastCheckpointHint = z.infer<typeof LastCheckpointHintSchema>;

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
  const hint = LastCheckpointHintSchema.safeParse(json);
  return hint.success ? hint.data : undefined;
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
  const options = fromVersion === undefined ? {} : { startAfter: `${LOG_DIR}${padVersion(fromVersion)}` };
  // Names past the last version's sort after its padded number (a later version, or `_last_checkpoint`).
  const past = throughVersion === undefined ? undefined : padVersion(throughVersion);
  for await (const info of listAll(store, LOG_DIR, options)) {
    if (past !== undefined && info.key.slice(LOG_DIR.length, LOG_DIR.length + past.length) > past) break;
    objects.push(info);
  }
  return indexLogListing(objects);
}
