import { quoteIdentifier } from "../../duck/sql-text.ts";
import {
  changeType,
  columnList,
  inTouchedFiles,
  matchRows,
  MATCH_COLUMN,
  rewriteFiles,
} from "../write/copy-on-write.ts";
import { AppendOnlyTableError, SchemaMismatchError } from "../errors.ts";
import { layoutOf, type OperationContext, type PreparedCommit } from "../commit/operation-context.ts";
import { duckType } from "../table/schema.ts";
import type { Snapshot } from "../read/snapshot.ts";
import { tableProperties } from "../table/table-properties.ts";

/**
 * UPDATE (copy-on-write): rows matching `predicate` (all rows when it is absent) get the `set`
 * expressions (DuckDB SQL over the row's current values), cast to the column types. Each file holding
 * a matching row is rewritten whole; with the change data feed on, matched rows are written to
 * `_change_data/` twice, as `update_preimage` and `update_postimage`.
 */
export async function prepareUpdate(
  context: OperationContext,
  snapshot: Snapshot,
  set: Readonly<Record<string, string>>,
  predicate: string | undefined,
): Promise<PreparedCommit> {
  if (tableProperties(snapshot.metadata).appendOnly) throw new AppendOnlyTableError("UPDATE");
  const { schema } = layoutOf(snapshot);
  const unknown = Object.keys(set).filter((name) => !schema.fields.some((f) => f.name === name));
  if (unknown.length > 0) {
    throw new SchemaMismatchError(`UPDATE sets unknown column(s) ${unknown.join(", ")}`, {
      data: { unknown },
    });
  }
  const updated = schema.fields
    .map((field) => {
      const name = quoteIdentifier(field.name);
      const expression = set[field.name];
      if (expression === undefined) return name;
      return `CASE WHEN ${MATCH_COLUMN} THEN CAST((${expression}) AS ${duckType(field.type)}) ELSE ${name} END AS ${name}`;
    })
    .join(", ");
  const matched = await matchRows(context, snapshot, predicate ?? "true");
  try {
    const rewrite = await rewriteFiles(
      context,
      snapshot,
      matched.touched,
      `SELECT ${updated} FROM ${matched.table} WHERE ${inTouchedFiles(matched.table)}`,
      `SELECT ${columnList(snapshot)}, ${changeType("update_preimage")} FROM ${matched.table} WHERE ${MATCH_COLUMN} ` +
        `UNION ALL SELECT ${updated}, ${changeType("update_postimage")} FROM ${matched.table} WHERE ${MATCH_COLUMN}`,
    );
    return {
      actions: rewrite.actions,
      operation: {
        operation: "UPDATE",
        operationParameters: { predicate: JSON.stringify(predicate === undefined ? [] : [predicate]) },
        operationMetrics: {
          numRemovedFiles: matched.touched.length,
          numAddedFiles: rewrite.addedFiles,
          numUpdatedRows: matched.matchedRows,
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
