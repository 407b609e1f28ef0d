import { quoteIdentifier } from "../duck/sql-text.ts";
import { changeType, columnList, rewriteFiles } from "./copy-on-write.ts";
import { AppendOnlyTableError, MergeDuplicateSourceError, SchemaMismatchError } from "./errors.ts";
import { layoutOf, tempTableName, type OperationContext, type PreparedCommit } from "./operation-context.ts";
import { stageRows, type RowSource } from "./row-source.ts";
import { duckType } from "./schema.ts";
import type { Snapshot } from "./snapshot.ts";
import { filesMatchingKeys } from "./key-range-pruning.ts";
import { FILE_TAG_COLUMN, fileKey, filesByKey, taggedFileRowsSql } from "./table-file-rows.ts";
import { tableProperties } from "./table-properties.ts";

/**
 * MERGE as a copy-on-write upsert: source rows are matched to target rows on key columns (equality;
 * a NULL key matches nothing, as in SQL).
 *
 * - `whenMatched`: `{ update: "all" }` copies every source column, `{ update: { col: expr } }` sets
 *   columns from DuckDB SQL over `target.<col>` and `source.<col>`, `"delete"` drops the row; absent,
 *   matched rows stay as they are. Several source rows matching one target row is an error.
 * - `whenNotMatched: "insert"` inserts source rows that match no target row.
 * - Only files whose key statistics admit a source key are read (`key-range-pruning.ts`), and only
 *   files holding a matched target row are rewritten; inserted rows go to new files. With the
 *   change data feed on, `_change_data/` gets update pre/post images, deletes and inserts.
 */
export interface MergeSpec {
  readonly source: RowSource;
  /** Key columns: a target row matches a source row when all are equal. */
  readonly on: readonly string[];
  readonly whenMatched?: { readonly update: "all" | Readonly<Record<string, string>> } | "delete";
  readonly whenNotMatched?: "insert";
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
  const staged = await stageRows(duck, context.scratch, schema, spec.source);
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
    const on = spec.on
      .map((k) => `target.${quoteIdentifier(k)} = source.${quoteIdentifier(k)}`)
      .join(" AND ");
    const joined = `${target} AS target LEFT JOIN ${source} AS source ON ${on}`;
    const matched = `source.${SOURCE_ROW} IS NOT NULL`;

    const rewriting = spec.whenMatched !== undefined;
    if (rewriting) {
      const [dup] = await duck.rows(
        `SELECT count(*) AS n FROM (SELECT target.${TARGET_ROW} FROM ${joined} WHERE ${matched} GROUP BY 1 HAVING count(*) > 1)`,
      );
      if (Number(dup!.n) > 0) throw new MergeDuplicateSourceError(spec.on);
    }
    const touchedKeys = rewriting
      ? (
          await duck.rows(`SELECT DISTINCT target.${FILE_TAG_COLUMN} AS file FROM ${joined} WHERE ${matched}`)
        ).map((r) => String(r.file))
      : [];
    const touched = filesByKey(snapshot, touchedKeys);
    const inTouched = `target.${FILE_TAG_COLUMN} IN (SELECT DISTINCT target.${FILE_TAG_COLUMN} FROM ${joined} WHERE ${matched})`;
    const deleting = spec.whenMatched === "delete";
    const updatedColumns = schema.fields
      .map((field) => {
        const name = quoteIdentifier(field.name);
        const whenMatched = spec.whenMatched;
        const expression =
          whenMatched === undefined || whenMatched === "delete"
            ? undefined
            : whenMatched.update === "all"
              ? `source.${name}`
              : whenMatched.update[field.name];
        if (expression === undefined) return `target.${name} AS ${name}`;
        return `CASE WHEN ${matched} THEN CAST((${expression}) AS ${duckType(field.type)}) ELSE target.${name} END AS ${name}`;
      })
      .join(", ");
    const keptOrUpdated = `SELECT ${updatedColumns} FROM ${joined} WHERE ${inTouched}${deleting ? ` AND NOT (${matched})` : ""}`;
    const notMatched = `NOT EXISTS (SELECT 1 FROM ${target} AS target WHERE ${on})`;
    const inserted = `SELECT ${columnList(snapshot, "source")} FROM ${source} AS source WHERE ${notMatched}`;
    // Without a matched clause no target file is rewritten: only the inserts are written.
    const parts = [
      ...(rewriting ? [keptOrUpdated] : []),
      ...(spec.whenNotMatched === "insert" ? [inserted] : []),
    ];
    const rewrittenSql = parts.length > 0 ? parts.join(" UNION ALL ") : `${keptOrUpdated} AND false`;

    const changes: string[] = [];
    if (rewriting && deleting) {
      changes.push(
        `SELECT ${columnList(snapshot, "target")}, ${changeType("delete")} FROM ${joined} WHERE ${matched}`,
      );
    } else if (rewriting) {
      changes.push(
        `SELECT ${columnList(snapshot, "target")}, ${changeType("update_preimage")} FROM ${joined} WHERE ${matched}`,
      );
      changes.push(
        `SELECT ${updatedColumns}, ${changeType("update_postimage")} FROM ${joined} WHERE ${matched}`,
      );
    }
    if (spec.whenNotMatched === "insert")
      changes.push(
        `SELECT ${columnList(snapshot, "source")}, ${changeType("insert")} FROM ${source} AS source WHERE ${notMatched}`,
      );

    const [counts] = await duck.rows(
      `SELECT (SELECT count(*) FROM ${source}) AS source_rows, ` +
        `(SELECT count(*) FROM ${joined} WHERE ${matched}) AS matched_rows, ` +
        `(SELECT count(*) FROM ${joined} WHERE ${inTouched} AND NOT (${matched})) AS copied_rows, ` +
        `(SELECT count(*) FROM ${source} AS source WHERE ${notMatched}) AS unmatched_source_rows`,
    );
    const matchedRows = rewriting ? Number(counts!.matched_rows) : 0;
    const inserts = spec.whenNotMatched === "insert" ? Number(counts!.unmatched_source_rows) : 0;
    const copied = rewriting ? Number(counts!.copied_rows) : 0;
    const rewrite = await rewriteFiles(
      context,
      snapshot,
      touched,
      rewrittenSql,
      changes.length > 0 ? changes.join(" UNION ALL ") : undefined,
      candidates.map(fileKey),
    );
    const updatedRows = rewriting && !deleting ? matchedRows : 0;
    const deletedRows = deleting ? matchedRows : 0;
    return {
      actions: rewrite.actions,
      operation: {
        operation: "MERGE",
        operationParameters: {
          predicate: JSON.stringify([on]),
          matchedPredicates: JSON.stringify(
            rewriting ? [{ actionType: deleting ? "delete" : "update" }] : [],
          ),
          notMatchedPredicates: JSON.stringify(spec.whenNotMatched ? [{ actionType: "insert" }] : []),
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
