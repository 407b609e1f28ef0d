import { serializeSchema, type Snapshot } from "../../delta/index.ts";
import type { MaterializedViewDefinition } from "../../pipeline/definition-schema.ts";
import { groupColumn, type IncrementalViewPlan } from "../../pipeline/plan/index.ts";
import type { DatasetCatalog, SnapshotRead } from "../dataset-catalog.ts";
import { schemaOfColumns } from "../output-schema.ts";
import { Sandbox } from "../sandbox.ts";
import { registerSnapshotViews, registerTableFiles } from "../snapshot-views.ts";

/**
 * What DuckDB says a materialized view gives, asked before its recompute goes to Spark: DESCRIBE of
 * its query over its inputs' schemas (no data file is fetched: each table read is registered empty),
 * and for a view kept incrementally the types of its grouping keys (DESCRIBE of its partial query).
 *
 * - The keys decide whether Spark may compute it at all (view-engine-choice.ts): the partials' state
 *   is bucketed by a hash of the key's JSON, which Spark spells as DuckDB for some types only.
 * - The columns are the schema the job casts its rows to (ebb_spark_batch.py `conform`), so the view's
 *   table has the types of the DuckDB recompute whichever engine wrote it.
 */

export interface DescribedView {
  /** The view's columns and DuckDB types, in order. */
  readonly columns: readonly { readonly name: string; readonly duckType: string }[];
  /** The grouping keys of a view kept incrementally: their SQL and DuckDB type. */
  readonly keys: readonly DescribedKey[];
}

export interface DescribedKey {
  readonly sql: string;
  readonly duckType: string;
}

export async function describeViewForSpark(
  view: MaterializedViewDefinition,
  catalog: DatasetCatalog,
  reads: readonly SnapshotRead[],
  snapshots: ReadonlyMap<string, Snapshot>,
  plan: IncrementalViewPlan | undefined,
  signal?: AbortSignal,
): Promise<DescribedView> {
  const what = `materialized view "${view.name}"`;
  const sandbox = await Sandbox.open({
    namespace: catalog.namespace,
    ...(signal ? { signal } : {}),
    owner: what,
  });
  try {
    for (const read of reads) {
      const snapshot = read.kind === "table" ? snapshots.get(read.name) : undefined;
      if (read.kind === "table" && snapshot) await registerTableFiles(sandbox, read, snapshot, []);
      else await registerSnapshotViews(sandbox, [read], snapshots);
    }
    const query = await sandbox.checkedQuery(plan?.sql ?? view.sql, what);
    const described = await sandbox.explainingFailures(what, () => sandbox.rows(`DESCRIBE ${query}`));
    const columns = described.map((r) => ({
      name: String(r["column_name"]),
      duckType: String(r["column_type"]),
    }));
    if (!plan) return { columns, keys: [] };
    const partials = await sandbox.rows(`DESCRIBE ${plan.partialSql}`);
    const typeOf = new Map(partials.map((r) => [String(r["column_name"]), String(r["column_type"])]));
    const keys = plan.groupKeys.map((sql, j) => ({ sql, duckType: typeOf.get(groupColumn(j)) ?? "" }));
    return { columns, keys };
  } finally {
    await sandbox.close();
  }
}

/** The Delta schema (as its JSON) the job casts the view's rows to: DuckDB's types, DuckDB's names. */
export function sparkOutputSchema(view: MaterializedViewDefinition, described: DescribedView): string {
  return serializeSchema(schemaOfColumns(described.columns, `materialized view "${view.name}"`));
}
