import { quoteIdentifier } from "../../duck/sql-text.ts";
import { changeType } from "./copy-on-write.ts";
import { duckType, type StructType } from "../table/schema.ts";
import { FILE_TAG_COLUMN } from "../read/table-file-rows.ts";

/**
 * The SQL of a MERGE (pure): given the temp tables holding the source rows (with a row number) and
 * the candidate target rows (with their file tag and a row number), the statements that find
 * duplicates and touched files, produce the rewritten rows, the change rows and the counts.
 * Target and source are aliased `target` and `source`, so update expressions can name both.
 */
export interface MergeClauses {
  /** Key columns: a target row matches a source row when all are equal (NULL matches nothing). */
  readonly on: readonly string[];
  readonly whenMatched?: { readonly update: "all" | Readonly<Record<string, string>> } | "delete";
  /**
   * With an update clause: matched rows for which this SQL condition (over `source.<col>` and
   * `target.<col>`) holds are deleted instead (Delta's `WHEN MATCHED AND <cond> THEN DELETE` before
   * `WHEN MATCHED THEN UPDATE`). NULL counts as false.
   */
  readonly deleteWhen?: string;
  readonly whenNotMatched?: "insert";
  /** Source rows that match nothing are inserted only where this condition (over `source.<col>`) holds. */
  readonly insertWhen?: string;
}

export interface MergeTables {
  readonly source: string;
  readonly sourceRow: string;
  readonly target: string;
  readonly targetRow: string;
}

export interface MergeStatements {
  /** Target rows matched by more than one source row (must be 0 when rows are rewritten). */
  readonly duplicatesSql: string;
  /** Files holding a matched target row (`file`); none without a matched clause. */
  readonly touchedFilesSql: string | undefined;
  /** The rows of the new data files: kept and updated rows of touched files, plus inserts. */
  readonly rewrittenSql: string | undefined;
  /** Change rows (schema columns and `_change_type`) for the change data feed. */
  readonly changesSql: string | undefined;
  /** One row: source_rows, matched_rows, deleted_rows, copied_rows, inserted_rows. */
  readonly countsSql: string;
}

export function mergeStatements(
  schema: StructType,
  clauses: MergeClauses,
  tables: MergeTables,
): MergeStatements {
  const { source, sourceRow, target, targetRow } = tables;
  const q = quoteIdentifier;
  const columns = (alias: string) => schema.fields.map((f) => `${alias}.${q(f.name)}`).join(", ");
  const on = clauses.on.map((k) => `target.${q(k)} = source.${q(k)}`).join(" AND ");
  const joined = `${target} AS target LEFT JOIN ${source} AS source ON ${on}`;
  const matched = `source.${sourceRow} IS NOT NULL`;
  const rewriting = clauses.whenMatched !== undefined;
  const updating = rewriting && clauses.whenMatched !== "delete";
  const deleteCondition =
    clauses.whenMatched === "delete"
      ? "true"
      : updating && clauses.deleteWhen !== undefined
        ? `coalesce((${clauses.deleteWhen}), false)`
        : undefined;
  const deletes = deleteCondition ? `(${matched} AND ${deleteCondition})` : "false";
  const updates = updating ? `(${matched} AND NOT ${deletes})` : "false";
  const inserting = clauses.whenNotMatched === "insert";

  const updated = schema.fields
    .map((field) => {
      const name = q(field.name);
      const expression = updateExpression(clauses, field.name);
      if (expression === undefined) return `target.${name} AS ${name}`;
      return `CASE WHEN ${matched} THEN CAST((${expression}) AS ${duckType(field.type)}) ELSE target.${name} END AS ${name}`;
    })
    .join(", ");
  const touchedFiles = `SELECT DISTINCT target.${FILE_TAG_COLUMN} AS file FROM ${joined} WHERE ${matched}`;
  const inTouched = `target.${FILE_TAG_COLUMN} IN (SELECT file FROM (${touchedFiles}))`;
  const keptOrUpdated = `SELECT ${updated} FROM ${joined} WHERE ${inTouched}${deleteCondition ? ` AND NOT ${deletes}` : ""}`;
  const insertFilter =
    clauses.insertWhen !== undefined ? ` AND coalesce((${clauses.insertWhen}), false)` : "";
  const unmatchedSource = `FROM ${source} AS source WHERE NOT EXISTS (SELECT 1 FROM ${target} AS target WHERE ${on})${insertFilter}`;
  const inserted = `SELECT ${columns("source")} ${unmatchedSource}`;

  const rewritten = [...(rewriting ? [keptOrUpdated] : []), ...(inserting ? [inserted] : [])];
  const changes = [
    ...(deleteCondition
      ? [`SELECT ${columns("target")}, ${changeType("delete")} FROM ${joined} WHERE ${deletes}`]
      : []),
    ...(updating
      ? [
          `SELECT ${columns("target")}, ${changeType("update_preimage")} FROM ${joined} WHERE ${updates}`,
          `SELECT ${updated}, ${changeType("update_postimage")} FROM ${joined} WHERE ${updates}`,
        ]
      : []),
    ...(inserting ? [`SELECT ${columns("source")}, ${changeType("insert")} ${unmatchedSource}`] : []),
  ];
  return {
    duplicatesSql: `SELECT count(*) AS n FROM (SELECT target.${targetRow} FROM ${joined} WHERE ${matched} GROUP BY 1 HAVING count(*) > 1)`,
    touchedFilesSql: rewriting ? touchedFiles : undefined,
    rewrittenSql: rewritten.length > 0 ? rewritten.join(" UNION ALL ") : undefined,
    changesSql: changes.length > 0 ? changes.join(" UNION ALL ") : undefined,
    countsSql:
      `SELECT (SELECT count(*) FROM ${source}) AS source_rows, ` +
      `(SELECT count(*) FROM ${joined} WHERE ${matched}) AS matched_rows, ` +
      `(SELECT count(*) FROM ${joined} WHERE ${deletes}) AS deleted_rows, ` +
      `(SELECT count(*) FROM ${joined} WHERE ${inTouched} AND NOT (${matched})) AS copied_rows, ` +
      `(SELECT count(*) ${unmatchedSource}) AS inserted_rows`,
  };
}

function updateExpression(clauses: MergeClauses, column: string): string | undefined {
  const whenMatched = clauses.whenMatched;
  if (whenMatched === undefined || whenMatched === "delete") return undefined;
  return whenMatched.update === "all" ? `source.${quoteIdentifier(column)}` : whenMatched.update[column];
}
