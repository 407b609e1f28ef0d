import type { DuckSession } from "../../duck/duck-session.ts";
import { quoteIdentifier } from "../../duck/sql-text.ts";
import type { FileStats } from "../log/actions.ts";
import { SchemaMismatchError } from "../errors.ts";
import type { StatsColumn } from "./file-stats.ts";
import type { DeltaType, StructType } from "../table/schema.ts";

/**
 * NOT NULL columns (`nullable: false`, enforced by writers: PROTOCOL.md "Column Invariants" and
 * Delta's NOT NULL constraint), checked without a second pass over the data where possible: from
 * the null counts of the written files' stats and from their partition values. Only columns the
 * stats do not cover need a query over the rows, before writing.
 */

/**
 * NOT NULL columns whose nulls neither stats nor partition values reveal, as dotted paths: a
 * top-level column, or a field nested in structs, which must be set wherever its parent struct is
 * (Delta's nested NOT NULL; fields inside arrays and maps are refused at create, `table-creation.ts`).
 */
export function requiredColumnsNeedingScan(
  schema: StructType,
  partitionColumns: readonly string[],
  statsColumns: readonly StatsColumn[],
): string[][] {
  const covered = new Set([...partitionColumns, ...statsColumns.map((c) => c.name)]);
  const paths: string[][] = [];
  const nested = (type: DeltaType, parent: string[]) => {
    if (typeof type === "string" || type.type !== "struct") return;
    for (const f of type.fields) {
      if (!f.nullable) paths.push([...parent, f.name]);
      nested(f.type, [...parent, f.name]);
    }
  };
  for (const f of schema.fields) {
    if (!f.nullable && !covered.has(f.name)) paths.push([f.name]);
    nested(f.type, [f.name]);
  }
  return paths;
}

/** Fails when any row of `rowsSql` has NULL at one of `paths` while the path's parent is set. */
export async function assertNoNullsByScan(
  duck: DuckSession,
  rowsSql: string,
  paths: readonly string[][],
): Promise<void> {
  if (paths.length === 0) return;
  const access = (path: readonly string[]) => path.map(quoteIdentifier).join(".");
  const counts = paths.map((path, i) => {
    const parent = path.length > 1 ? `${access(path.slice(0, -1))} IS NOT NULL AND ` : "";
    return `count(*) FILTER (WHERE ${parent}${access(path)} IS NULL) AS n${i}`;
  });
  const [row] = await duck.rows(`SELECT ${counts.join(", ")} FROM (${rowsSql})`);
  throwIfViolated(paths.filter((_, i) => Number(row![`n${i}`]) > 0).map((path) => path.join(".")));
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
