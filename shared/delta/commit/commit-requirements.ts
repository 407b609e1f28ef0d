import type { Action } from "../log/actions.ts";
import { findCommitInfo } from "../log/commit-file.ts";
import type { ConflictKind } from "../errors.ts";
import { decodeLogPath } from "../log/data-file-paths.ts";

/**
 * Optimistic concurrency, iceberg-style: a commit carries the requirements its plan relied on, and a
 * pure check decides whether a commit that won the race in the meantime breaks any of them. When none
 * is broken the commit is rebased onto the next version unchanged (write-serializable isolation:
 * a concurrent blind append does not invalidate a DELETE, as in Delta).
 */
export type CommitRequirement =
  /** Files this commit read or removes must still be live (Delta: ConcurrentDeleteRead/DeleteDelete). */
  | { readonly kind: "files-live"; readonly paths: ReadonlySet<string>; readonly removes: boolean }
  /** No concurrent `metaData` (schema, partitioning, properties) change. */
  | { readonly kind: "metadata-unchanged" }
  /** No concurrent `protocol` change. */
  | { readonly kind: "protocol-unchanged" }
  /** No concurrent RESTORE: it moves the whole table to another timeline. */
  | { readonly kind: "no-restore" }
  /** No concurrent commit adding files (a RESTORE's plan must see every live file). */
  | { readonly kind: "no-files-added" }
  /** No concurrent `txn` for this appId (the same stream committed meanwhile). */
  | { readonly kind: "txn-unchanged"; readonly appId: string };

/** A failed requirement: which one, against which winning commit, with the evidence. */
export interface Conflict {
  readonly kind: ConflictKind;
  readonly winningVersion: number;
  readonly operation?: string;
  readonly paths?: readonly string[];
  readonly appId?: string;
}

/** The requirements every data-changing commit has, plus the files it read and the txn it writes. */
export function standardRequirements(options: {
  readonly readFiles?: Iterable<string>;
  readonly removedFiles?: Iterable<string>;
  readonly txnAppId?: string;
}): CommitRequirement[] {
  const requirements: CommitRequirement[] = [
    { kind: "metadata-unchanged" },
    { kind: "protocol-unchanged" },
    { kind: "no-restore" },
  ];
  const removed = new Set(options.removedFiles ?? []);
  const read = new Set([...(options.readFiles ?? [])].filter((path) => !removed.has(path)));
  if (removed.size > 0) requirements.push({ kind: "files-live", paths: removed, removes: true });
  if (read.size > 0) requirements.push({ kind: "files-live", paths: read, removes: false });
  if (options.txnAppId !== undefined) requirements.push({ kind: "txn-unchanged", appId: options.txnAppId });
  return requirements;
}

/** The first requirement `winner` (the actions of commit `winningVersion`) breaks, or `undefined`. */
export function findConflict(
  requirements: readonly CommitRequirement[],
  winningVersion: number,
  winner: readonly Action[],
): Conflict | undefined {
  const operation = findCommitInfo(winner)?.operation;
  const at = { winningVersion, ...(operation !== undefined ? { operation } : {}) };
  for (const requirement of requirements) {
    switch (requirement.kind) {
      case "no-restore":
        if (operation === "RESTORE") return { kind: "concurrent-restore", ...at };
        break;
      case "metadata-unchanged":
        if (winner.some((a) => "metaData" in a)) return { kind: "metadata-changed", ...at };
        break;
      case "protocol-unchanged":
        if (winner.some((a) => "protocol" in a)) return { kind: "protocol-changed", ...at };
        break;
      case "no-files-added": {
        const added = winner.flatMap((a) => ("add" in a ? [decodeLogPath(a.add.path)] : []));
        if (added.length > 0) return { kind: "concurrent-append", ...at, paths: added };
        break;
      }
      case "files-live": {
        const gone = winner.flatMap((a) =>
          "remove" in a && requirement.paths.has(decodeLogPath(a.remove.path))
            ? [decodeLogPath(a.remove.path)]
            : [],
        );
        if (gone.length > 0) {
          const kind = requirement.removes ? "concurrent-delete-delete" : "concurrent-delete-read";
          return { kind, ...at, paths: gone };
        }
        break;
      }
      case "txn-unchanged":
        if (winner.some((a) => "txn" in a && a.txn.appId === requirement.appId)) {
          return { kind: "concurrent-transaction", ...at, appId: requirement.appId };
        }
        break;
    }
  }
  return undefined;
}
