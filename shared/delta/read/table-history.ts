import type { ObjectStore } from "../../object-store/object-store.ts";
import { listCommits } from "./commit-history.ts";
import { listLog } from "../log/log-listing.ts";
import { latestListedVersion } from "../log/log-segment.ts";

/**
 * `DESCRIBE HISTORY`: one entry per commit still in the log, newest first, with what its
 * `commitInfo` says (PROTOCOL.md "Commit Provenance Information"). Parameters and metrics are string
 * maps, as Delta writes them. A commit without `commitInfo` (some writers omit it) still has a
 * version and a timestamp.
 */
export interface HistoryEntry {
  readonly version: number;
  readonly timestamp: number;
  readonly operation?: string;
  readonly operationParameters: Readonly<Record<string, unknown>>;
  readonly operationMetrics: Readonly<Record<string, unknown>>;
  readonly readVersion?: number;
  readonly isBlindAppend?: boolean;
  readonly engineInfo?: string;
}

export async function readHistory(
  store: ObjectStore,
  options: { readonly limit?: number } = {},
): Promise<HistoryEntry[]> {
  let from: number | undefined;
  if (options.limit !== undefined) {
    const latest = latestListedVersion(await listLog(store));
    if (latest === undefined) return [];
    from = Math.max(0, latest - options.limit + 1);
  }
  const commits = await listCommits(store, from === undefined ? {} : { from });
  return commits.reverse().map(({ version, timestamp, commitInfo }) => ({
    version,
    timestamp,
    ...(commitInfo?.operation !== undefined ? { operation: commitInfo.operation } : {}),
    operationParameters: commitInfo?.operationParameters ?? {},
    operationMetrics: commitInfo?.operationMetrics ?? {},
    ...(commitInfo?.readVersion !== undefined ? { readVersion: commitInfo.readVersion } : {}),
    ...(commitInfo?.isBlindAppend !== undefined ? { isBlindAppend: commitInfo.isBlindAppend } : {}),
    ...(commitInfo?.engineInfo !== undefined ? { engineInfo: commitInfo.engineInfo } : {}),
  }));
}
