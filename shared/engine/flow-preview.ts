import { CHANGE_FEED_COLUMNS, duckType, type StructType } from "../delta/index.ts";
import { quoteIdentifier } from "../duck/sql-text.ts";
import { readsChangeFeed } from "../pipeline/auto-cdc-rules.ts";
import type { FlowDefinition } from "../pipeline/definition-schema.ts";
import type { DatasetCatalog } from "./dataset-catalog.ts";
import { schemaOfColumns } from "./output-schema.ts";
import type { Sandbox } from "./sandbox.ts";
import { MICRO_BATCH_NAME } from "../pipeline/dataset-references.ts";

/**
 * A streaming flow's output, described before an update runs (the up-front checks: schema-check.ts,
 * auto-cdc/cdc-compatibility.ts): its query over empty relations shaped like what it reads —
 * `source` as the auto_loader's declared columns or the upstream table's schema (with the change
 * feed's columns when the flow reads it), other datasets as their tables' schemas. Undefined when
 * that cannot be said before the batch: an inferred file schema, a view in the way, an external Delta
 * source, a table not written yet, SQL DuckDB cannot describe over empty relations.
 */
export async function previewFlowOutput(
  /** The sandbox to describe in, opened only when there is something to describe. */
  sandbox: () => Promise<Sandbox>,
  catalog: DatasetCatalog,
  dataset: string,
  flow: FlowDefinition,
  /** A dataset's table schema as the flow will read it (undefined: unknown, no table). */
  tableSchema: (name: string) => Promise<StructType | undefined>,
): Promise<StructType | undefined> {
  const source =
    flow.source.type === "auto_loader"
      ? flow.source.schema && Object.entries(flow.source.schema)
      : flow.source.type === "stream"
        ? feedColumns(
            columnsOf(await tableSchema(flow.source.dataset)),
            readsChangeFeed(catalog.pipeline.definition, flow),
          )
        : undefined;
  if (!source) return undefined;
  const reads = catalog.snapshotReads(dataset, flow.name);
  if (reads.some((read) => read.kind === "view")) return undefined;
  const readColumns: [string, [string, string][]][] = [];
  for (const read of reads) {
    const columns = columnsOf(await tableSchema(read.name));
    if (!columns) return undefined;
    readColumns.push([read.name, columns]);
  }
  const key = JSON.stringify([
    catalog.pipeline.definition.catalog,
    catalog.pipeline.definition.schema,
    flow.sql,
    source,
    readColumns,
  ]);
  const known = DESCRIBED.get(key);
  if (known) return known;
  const described = await describeFlow(await sandbox(), flow.sql, source, readColumns);
  if (described) remember(key, described);
  return described;
}

/**
 * Outputs described so far, by everything a description depends on (the SQL, the shapes it reads,
 * the namespace its names resolve in): an update's checks describe the same flows over the same
 * tables each time, and each description would otherwise open a sandbox (a DuckDB instance, ~10 ms).
 * Only descriptions are kept: one that failed may have failed for a passing reason.
 */
const DESCRIBED = new Map<string, StructType>();
const DESCRIBED_LIMIT = 512;

function remember(key: string, schema: StructType): void {
  DESCRIBED.set(key, schema);
  if (DESCRIBED.size > DESCRIBED_LIMIT) DESCRIBED.delete(DESCRIBED.keys().next().value as string);
}

function columnsOf(schema: StructType | undefined): [string, string][] | undefined {
  return schema?.fields.map((field) => [field.name, duckType(field.type)]);
}

/** A change feed reader's source: the table's columns and the feed's. */
function feedColumns(
  columns: [string, string][] | undefined,
  changeFeed: boolean,
): [string, string][] | undefined {
  return columns && changeFeed
    ? [...columns, ...CHANGE_FEED_COLUMNS.map(([c, t]): [string, string] => [c, t])]
    : columns;
}

/** The query's output over empty relations of these shapes; undefined when DuckDB cannot say. */
async function describeFlow(
  sandbox: Sandbox,
  sql: string,
  source: readonly [string, string][],
  reads: readonly [string, readonly [string, string][]][],
): Promise<StructType | undefined> {
  try {
    return await describeQuery(sandbox, sql, "the flow", [
      { name: MICRO_BATCH_NAME, columns: source },
      ...reads.map(([name, columns]) => ({ name, columns })),
    ]);
  } catch {
    return undefined;
  }
}

/** A relation a query reads, made in the sandbox before it is described: an empty table, or a view. */
export type DescribedRelation =
  | { readonly name: string; readonly columns: readonly (readonly [string, string])[] }
  | { readonly name: string; readonly sql: string };

/**
 * The output of `sql` over `relations` (in order: a view after what it reads), described by DuckDB
 * over empty tables. DuckDB's own errors are thrown as they are (a "Binder Error" names the column it
 * cannot find and its candidates), so a caller can tell a query that does not bind.
 */
export async function describeQuery(
  sandbox: Sandbox,
  sql: string,
  what: string,
  relations: readonly DescribedRelation[],
): Promise<StructType> {
  for (const relation of relations) {
    const name = quoteIdentifier(relation.name);
    await sandbox.run(
      "sql" in relation
        ? `CREATE OR REPLACE TEMP VIEW ${name} AS ${await sandbox.checkedQuery(relation.sql, `view ${relation.name}`)}`
        : `CREATE OR REPLACE TEMP TABLE ${name} (${relation.columns.map(([c, t]) => `${quoteIdentifier(c)} ${t}`).join(", ")})`,
    );
  }
  const described = await sandbox.rows(`DESCRIBE (${await sandbox.checkedQuery(sql, what)})`);
  return schemaOfColumns(
    described.map((row) => ({ name: String(row["column_name"]), duckType: String(row["column_type"]) })),
    what,
  );
}
