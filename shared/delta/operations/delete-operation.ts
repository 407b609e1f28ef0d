import { standardRequirements } from "../commit/commit-requirements.ts";
import {
  changeType,
  columnList,
  inTouchedFiles,
  matchRows,
  MATCH_COLUMN,
  rewriteFiles,
} from "../write/copy-on-write.ts";
import { AppendOnlyTableError } from "../errors.ts";
import { recordCount, removeFor } from "../commit/file-actions.ts";
import type { OperationContext, PreparedCommit } from "../commit/operation-context.ts";
import type { Snapshot } from "../read/snapshot.ts";
import { tableProperties } from "../table/table-properties.ts";

/**
 * DELETE (copy-on-write). Without a predicate every live file is removed, metadata only (the change
 * data feed reads removed files as deletes). With one, each file holding a matching row is replaced
 * by a file of its other rows, and with the change data feed on the deleted rows go to
 * `_change_data/` as `delete`.
 */
export async function prepareDelete(
  context: OperationContext,
  snapshot: Snapshot,
  predicate: string | undefined,
): Promise<PreparedCommit> {
  if (tableProperties(snapshot.metadata).appendOnly) throw new AppendOnlyTableError("DELETE");
  if (predicate === undefined) return deleteAll(context, snapshot);
  const matched = await matchRows(context, snapshot, predicate);
  try {
    const rewrite = await rewriteFiles(
      context,
      snapshot,
      matched.touched,
      `SELECT ${columnList(snapshot)} FROM ${matched.table} WHERE ${inTouchedFiles(matched.table)} AND NOT ${MATCH_COLUMN}`,
      `SELECT ${columnList(snapshot)}, ${changeType("delete")} FROM ${matched.table} WHERE ${MATCH_COLUMN}`,
    );
    return {
      actions: rewrite.actions,
      operation: {
        operation: "DELETE",
        operationParameters: { predicate: JSON.stringify([predicate]) },
        operationMetrics: {
          numRemovedFiles: matched.touched.length,
          numAddedFiles: rewrite.addedFiles,
          numDeletedRows: matched.matchedRows,
          numCopiedRows: matched.copiedRows,
          numAddedChangeFiles: rewrite.addedChangeFiles,
        },
        isBlindAppend: false,
      },
      requirements: rewrite.requirements,
    };
  } finally {
    await matched.dispose();
  }
}

function deleteAll(context: OperationContext, snapshot: Snapshot): PreparedCommit {
  const now = context.clock();
  const files = [...snapshot.files];
  return {
    actions: files.map(([, file]) => ({ remove: removeFor(file, now) })),
    operation: {
      operation: "DELETE",
      operationParameters: { predicate: JSON.stringify([]) },
      operationMetrics: {
        numRemovedFiles: files.length,
        numAddedFiles: 0,
        numDeletedRows: files.reduce((sum, [, file]) => sum + recordCount(file), 0),
        numCopiedRows: 0,
        numAddedChangeFiles: 0,
      },
      isBlindAppend: false,
    },
    requirements: standardRequirements({ removedFiles: files.map(([key]) => key) }),
  };
}

/**
 * TRUNCATE (a pipeline's `reset_mode`): every live file removed in one metadata-only commit, as a
 * DELETE without predicate but under its own operation name, and allowed on an append-only table
 * (a reset starts the table over; it does not edit rows).
 */
export function prepareTruncate(snapshot: Snapshot, now: number): PreparedCommit {
  const files = [...snapshot.files];
  return {
    actions: files.map(([, file]) => ({ remove: removeFor(file, now) })),
    operation: {
      operation: "TRUNCATE",
      operationParameters: {},
      operationMetrics: {
        numRemovedFiles: files.length,
        numDeletedRows: files.reduce((sum, [, file]) => sum + recordCount(file), 0),
      },
      isBlindAppend: false,
    },
    requirements: standardRequirements({ removedFiles: files.map(([key]) => key) }),
  };
}
