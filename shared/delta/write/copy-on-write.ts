import { quoteIdentifier } from "../../duck/sql-text.ts";
import type { Action, AddFile } from "../log/actions.ts";
import { standardRequirements, type CommitRequirement } from "../commit/commit-requirements.ts";
import { CHANGE_TYPE_COLUMN, writeChangeDataFiles, writeDataFiles } from "./data-file-writer.ts";
import { removeFor } from "../commit/file-actions.ts";
import {
  layoutOf,
  tempTableName,
  writesChangeData,
  type OperationContext,
} from "../commit/operation-context.ts";
import type { Snapshot } from "../read/snapshot.ts";
import { FILE_TAG_COLUMN, fileKey, filesByKey, taggedFileRowsSql } from "../read/table-file-rows.ts";

/**
 * Copy-on-write, shared by DELETE and UPDATE: every live row is tagged with its file and with
 * whether the predicate holds (`NULL` counts as false, as in SQL `WHERE`); only files holding a
 * matching row are rewritten, every other file stays untouched.
 */

/** The column of the matched-rows table saying whether the predicate holds for the row. */
export const MATCH_COLUMN = "__ebb_match";

export interface MatchedRows {
  /** Temp table: schema columns, `__ebb_file`, `__ebb_match`. */
  readonly table: string;
  /** Files holding at least one matching row: these get rewritten. */
  readonly touched: readonly AddFile[];
  readonly matchedRows: number;
  /** Rows of touched files that do not match (copied into the rewritten files). */
  readonly copiedRows: number;
  dispose(): Promise<void>;
}

/** Evaluates `predicate` (a DuckDB SQL boolean expression over the table's columns) on every live row. */
export async function matchRows(
  context: OperationContext,
  snapshot: Snapshot,
  predicate: string,
): Promise<MatchedRows> {
  const rowsSql = await taggedFileRowsSql(context.duck, context.files, snapshot, [
    ...snapshot.files.values(),
  ]);
  const table = tempTableName("matched");
  await context.duck.run(
    `CREATE TEMP TABLE ${table} AS SELECT *, coalesce((${predicate}), false) AS ${MATCH_COLUMN} FROM (${rowsSql})`,
  );
  const dispose = () => context.duck.run(`DROP TABLE IF EXISTS ${table}`);
  try {
    const perFile = await context.duck.rows(
      `SELECT ${FILE_TAG_COLUMN} AS file, count(*) FILTER (WHERE ${MATCH_COLUMN}) AS matched, count(*) AS total ` +
        `FROM ${table} GROUP BY 1 HAVING count(*) FILTER (WHERE ${MATCH_COLUMN}) > 0`,
    );
    const matchedRows = perFile.reduce((sum, row) => sum + Number(row.matched), 0);
    const touchedRows = perFile.reduce((sum, row) => sum + Number(row.total), 0);
    return {
      table,
      touched: filesByKey(
        snapshot,
        perFile.map((row) => String(row.file)),
      ),
      matchedRows,
      copiedRows: touchedRows - matchedRows,
      dispose,
    };
  } catch (error) {
    await dispose();
    throw error;
  }
}

/** The SQL condition selecting rows of touched files. */
export function inTouchedFiles(table: string): string {
  return `${FILE_TAG_COLUMN} IN (SELECT ${FILE_TAG_COLUMN} FROM ${table} WHERE ${MATCH_COLUMN})`;
}

export interface Rewrite {
  readonly actions: Action[];
  readonly addedFiles: number;
  readonly addedChangeFiles: number;
  readonly requirements: CommitRequirement[];
}

/**
 * Writes the replacement rows (`rewrittenSql`: schema columns, in order) and, when the table has
 * the change data feed on, the change rows (`changesSql`: schema columns and `_change_type`), and
 * assembles remove + add + cdc actions. Requirements: the files read are still live; touched ones are removed.
 */
export async function rewriteFiles(
  context: OperationContext,
  snapshot: Snapshot,
  touched: readonly AddFile[],
  rewrittenSql: string,
  changesSql: string | undefined,
  /** The files the operation read (default: every live file). */
  readFiles: Iterable<string> = snapshot.files.keys(),
): Promise<Rewrite> {
  const layout = layoutOf(snapshot);
  const adds = await writeDataFiles(context, layout, rewrittenSql);
  const cdcs =
    changesSql !== undefined && writesChangeData(snapshot)
      ? await writeChangeDataFiles(context, layout, changesSql)
      : [];
  const now = context.clock();
  return {
    actions: [
      ...touched.map((file) => ({ remove: removeFor(file, now) })),
      ...adds.map((add) => ({ add })),
      ...cdcs.map((cdc) => ({ cdc })),
    ],
    addedFiles: adds.length,
    addedChangeFiles: cdcs.length,
    requirements: standardRequirements({
      readFiles,
      removedFiles: touched.map(fileKey),
    }),
  };
}

/** `"a", "b"` — the schema columns of `snapshot`, quoted, for select lists. */
export function columnList(snapshot: Snapshot, qualifier?: string): string {
  return layoutOf(snapshot)
    .schema.fields.map((f) =>
      qualifier ? `${qualifier}.${quoteIdentifier(f.name)}` : quoteIdentifier(f.name),
    )
    .join(", ");
}

/** `'update_preimage' AS "_change_type"` */
export function changeType(kind: "insert" | "delete" | "update_preimage" | "update_postimage"): string {
  return `'${kind}' AS ${quoteIdentifier(CHANGE_TYPE_COLUMN)}`;
}
