import { columnList, rewriteFiles } from "../write/copy-on-write.ts";
import { AppendOnlyTableError, MergeDuplicateSourceError, SchemaMismatchError } from "../errors.ts";
import {
  layoutOf,
  tempTableName,
  type OperationContext,
  type PreparedCommit,
} from "../commit/operation-context.ts";
import { stageRows, type RowSource } from "../write/row-source.ts";
import { mergeStatements, type MergeClauses } from "../write/merge-statements.ts";
import type { Snapshot } from "../read/snapshot.ts";
import { filesMatchingKeys } from "../read/key-range-pruning.ts";
import { fileKey, filesByKey, taggedFileRowsSql } from "../read/table-file-rows.ts";
import { tableProperties } from "../table/table-properties.ts";

/**
 * MERGE as a copy-on-write upsert: source rows are matched to target rows on key columns (equality;
 * a NULL key matches nothing, as in SQL).
 *
 * - `whenMatched`: `{ update: "all" }` copies every source column, `{ update: { col: expr } }` sets
 *   columns from DuckDB SQL over `target.<col>` and `source.<col>`, `"delete"` drops the row; absent,
 *   matched rows stay as they are. Several source rows matching one target row is an error.
 * - `deleteWhen` (with an update): matched rows for which it holds are deleted instead of updated.
 * - `whenNotMatched: "insert"` inserts source rows that match no target row (where `insertWhen` holds).
 * - Only files whose key statistics admit a source key are read (`key-range-pruning.ts`), and only
 *   files holding a matched target row are rewritten; inserted rows go to new files. With the
 *   change data feed on, `_change_data/` gets update pre/post images, deletes and inserts.
 */
export interface MergeSpec extends MergeClauses {
  readonly source: RowSource;
  /**
   * Columns of a SQL source that are not the table's: kept beside the staged row so `deleteWhen`,
   * `insertWhen` and update expressions can read them (`source.<col>`), never written.
   */
  readonly sourceOnlyColumns?: readonly string[];
}

const SOURCE_ROW = "__ebb_source_row";
const TARGET_ROW = "__ebb_target_row";

export async function prepareMerge(
  context: OperationContext,
  snapshot: Snapshot,
  spec: MergeSpec,
): Promise<PreparedCommit> {
  if (spec.whenMatched !== undefined && tableProperties(snapshot.metadata).appendOnly) {
    throw new AppendOnlyTableError("MERGE");
  }
  const { schema } = layoutOf(snapshot);
  const columns = schema.fields.map((f) => f.name);
  const unknownKeys = spec.on.filter((key) => !columns.includes(key));
  if (spec.on.length === 0 || unknownKeys.length > 0) {
    throw new SchemaMismatchError(
      `MERGE needs key columns of the table; unknown: ${unknownKeys.join(", ") || "(none given)"}`,
    );
  }
  const duck = context.duck;
  const source = tempTableName("merge_source");
  const target = tempTableName("merge_target");
  const staged = await stageRows(duck, context.scratch, schema, spec.source, spec.sourceOnlyColumns);
  try {
    await duck.run(
      `CREATE TEMP TABLE ${source} AS SELECT *, row_number() OVER () AS ${SOURCE_ROW} FROM (${staged.sql})`,
    );
    // Only files whose key ranges can hold a source key are read (and so conflict-checked).
    const candidates = await filesMatchingKeys(duck, snapshot, schema, source, spec.on);
    const targetSql = await taggedFileRowsSql(duck, context.files, snapshot, candidates);
    await duck.run(
      `CREATE TEMP TABLE ${target} AS SELECT *, row_number() OVER () AS ${TARGET_ROW} FROM (${targetSql})`,
    );
    const sql = mergeStatements(schema, spec, {
      source,
      sourceRow: SOURCE_ROW,
      target,
      targetRow: TARGET_ROW,
    });
    const rewriting = spec.whenMatched !== undefined;
    const updating = rewriting && spec.whenMatched !== "delete";
    if (rewriting) {
      const [duplicates] = await duck.rows(sql.duplicatesSql);
      if (Number(duplicates!.n) > 0) throw new MergeDuplicateSourceError(spec.on);
    }
    const touched = sql.touchedFilesSql
      ? filesByKey(
          snapshot,
          (await duck.rows(sql.touchedFilesSql)).map((r) => String(r.file)),
        )
      : [];
    const [counts] = await duck.rows(sql.countsSql);
    const matchedRows = rewriting ? Number(counts!.matched_rows) : 0;
    const inserts = spec.whenNotMatched === "insert" ? Number(counts!.inserted_rows) : 0;
    const copied = rewriting ? Number(counts!.copied_rows) : 0;
    const rewrite = await rewriteFiles(
      context,
      snapshot,
      touched,
      sql.rewrittenSql ?? `SELECT ${columnList(snapshot)} FROM ${target} WHERE false`,
      sql.changesSql,
      candidates.map(fileKey),
    );
    const deletedRows = rewriting ? Number(counts!.deleted_rows) : 0;
    const updatedRows = updating ? matchedRows - deletedRows : 0;
    return {
      actions: rewrite.actions,
      operation: {
        operation: "MERGE",
        operationParameters: {
          predicate: JSON.stringify([spec.on.map((k) => `target.${k} = source.${k}`).join(" AND ")]),
          matchedPredicates: JSON.stringify([
            ...(spec.whenMatched === "delete" || (updating && spec.deleteWhen !== undefined)
              ? [{ actionType: "delete", ...(updating ? { predicate: spec.deleteWhen } : {}) }]
              : []),
            ...(updating ? [{ actionType: "update" }] : []),
          ]),
          notMatchedPredicates: JSON.stringify(
            spec.whenNotMatched
              ? [
                  {
                    actionType: "insert",
                    ...(spec.insertWhen !== undefined ? { predicate: spec.insertWhen } : {}),
                  },
                ]
              : [],
          ),
        },
        operationMetrics: {
          numSourceRows: Number(counts!.source_rows),
          numTargetRowsInserted: inserts,
          numTargetRowsUpdated: updatedRows,
          numTargetRowsDeleted: deletedRows,
          numTargetRowsCopied: copied,
          numOutputRows: inserts + updatedRows + copied,
          numTargetFilesAdded: rewrite.addedFiles,
          numTargetFilesRemoved: touched.length,
          numTargetChangeFilesAdded: rewrite.addedChangeFiles,
        },
        isBlindAppend: false,
      },
      requirements: rewrite.requirements,
    };
  } finally {
    await duck.run(`DROP TABLE IF EXISTS ${source}`);
    await duck.run(`DROP TABLE IF EXISTS ${target}`);
    await staged.dispose();
  }
}
