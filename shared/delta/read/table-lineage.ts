/**
 * A table version's lineage: the versions whose changes its rows are made of. A RESTORE commit `R`
 * that restored version `t` holds exactly `t`'s rows (Delta records `t` as the commit's
 * `operationParameters.version`), so the versions `t+1 .. R` are another timeline, one that `R`
 * abandoned. Streaming readers, materialized views and the onset finder all follow this one rule.
 *
 * 1. Start at `from`.
 * 2. A RESTORE jumps to the version it restored (the RESTORE itself adds no rows of its own).
 * 3. Any other version is live: its own changes are in `from`'s rows; step to the version before it.
 * 4. Stop at or below `floor` (what the caller already knows about), or below version 0.
 */

export interface LineageWalk {
  /** The live versions above `floor`, ascending. */
  readonly live: readonly number[];
  /** The RESTORE commits walked through, ascending; the last may jump to `floor` or below. */
  readonly restores: readonly { readonly version: number; readonly restoredVersion: number }[];
}

/** The version a RESTORE commit restored, from its commit info; undefined for any other commit. */
export function restoredVersion(
  commitInfo:
    | { readonly operation?: string; readonly operationParameters?: Readonly<Record<string, unknown>> }
    | undefined,
): number | undefined {
  if (commitInfo?.operation !== "RESTORE") return undefined;
  // Delta writes operation parameters as strings ("3"); Ebb's own reads may hold numbers.
  const version = Number(commitInfo.operationParameters?.["version"]);
  return Number.isInteger(version) && version >= 0 ? version : undefined;
}

/** Walks the lineage of `from` down to `floor` (exclusive); `restoredAt` answers step 2's question. */
export function walkLineage(
  from: number,
  floor: number,
  restoredAt: (version: number) => number | undefined,
): LineageWalk {
  const live: number[] = [];
  const restores: { version: number; restoredVersion: number }[] = [];
  let version = from;
  while (version > floor && version >= 0) {
    const restored = restoredAt(version);
    // A RESTORE can only restore an earlier version; anything else would never end.
    if (restored !== undefined && restored < version) {
      restores.push({ version, restoredVersion: restored });
      version = restored;
      continue;
    }
    live.push(version);
    version -= 1;
  }
  return { live: live.reverse(), restores: restores.reverse() };
}
