import type { DuckSession } from "../../duck/duck-session.ts";
import { quoteIdentifier } from "../../duck/sql-text.ts";
import type { FileStats } from "../log/actions.ts";
import { SchemaMismatchError } from "../errors.ts";
import type { StatsColumn } from "./file-stats.ts";
import type { StructType } from "../table/schema.ts";

/**
 * NOT NULL columns (`nullable: false`, enforced by writers: PROTOCOL.md "Column Invariants" and
 * Delta's NOT NULL constraint), checked without a second pass over the data where possible: from
 * the null counts of the written files' stats and from their partition values. Only columns the
 * stats do not cover need a query over the rows, before writing.
 */

/** NOT NULL columns whose nulls neither stats nor partition values reveal. */
export function requiredColumnsNeedingScan(
  schema: StructType,
  partitionColumns: readonly string[],
  statsColumns: readonly StatsColumn[],
): string[] {
  const covered = new Set([...partitionColumns, ...statsColumns.map((c) => c.name)]);
  return schema.fields.filter((f) => !f.nullable && !covered.has(f.name)).map((f) => f.name);
}

/** Fails when any row of `rowsSql` has NULL in one of `columns`. */
export async function assertNoNullsByScan(
  duck: DuckSession,
  rowsSql: string,
  columns: readonly string[],
): Promise<void> {
  if (columns.length === 0) return;
  const counts = columns.map((c, i) => `count(*) FILTER (WHERE ${quoteIdentifier(c)} IS NULL) AS n${i}`);
  const [row] = await duck.rows(`SELECT ${counts.join(", ")} FROM (${rowsSql})`);
  throwIfViolated(columns.filter((_, i) => Number(row![`n${i}`]) > 0));
}

/** Fails when a written file holds NULL in a NOT NULL column, by its stats or partition values. */
export function assertNoNullsInFiles(
  schema: StructType,
  files: readonly {
    readonly stats: FileStats;
    readonly partitionValues: Readonly<Record<string, string | null>>;
  }[],
): void {
  const violated = schema.fields
    .filter((f) => !f.nullable)
    .map((f) => f.name)
    .filter((name) =>
      files.some((file) =>
        name in file.partitionValues
          ? file.partitionValues[name] === null
          : Number(file.stats.nullCount?.[name] ?? 0) > 0,
      ),
    );
  throwIfViolated(violated);
}

function throwIfViolated(columns: readonly string[]): void {
  if (columns.length > 0) {
    throw new SchemaMismatchError(`NULL in NOT NULL column(s) ${columns.join(", ")}`, { data: { columns } });
  }
}
