import { CHANGE_FEED_COLUMNS, duckType, type StructType } from "../delta/index.ts";
import type { ObjectStore } from "../object-store/object-store.ts";
import { readsChangeFeed } from "../pipeline/auto-cdc-rules.ts";
import type { FlowDefinition } from "../pipeline/definition-schema.ts";
import { MICRO_BATCH_NAME } from "../pipeline/dataset-references.ts";
import type { ValidatedPipeline } from "../pipeline/validate-pipeline.ts";
import { landFiles, listSourceFiles } from "./auto-loader-source.ts";
import { DatasetCatalog } from "./dataset-catalog.ts";
import { QueryDoesNotBindError } from "./errors.ts";
import { describeQuery, type DescribedRelation } from "./flow-preview.ts";
import { readRecords } from "./record-reader.ts";
import { Sandbox } from "./sandbox.ts";
import { readTableShape } from "./table-shape.ts";

/**
 * Binding every query of a pipeline over its inputs' schemas, as `validate_only` does: each view,
 * materialized view and flow, upstream first, is described by DuckDB (flow-preview.ts
 * `describeQuery`) over empty relations shaped like what it reads, so an unknown column or
 * function is refused before any run meets it (`QUERY_DOES_NOT_BIND`, naming the query and DuckDB's
 * message). A query whose inputs' schemas are not known yet is skipped, never refused, and returned
 * with the reason: a table never written, source files not landed, an event stream's records.
 *
 * 1. Tables read: their schema at the latest version, with the columns the flows bound before add
 *    (a deploy's new column reaches its readers); a materialized view's, its query's output.
 *    Views read: made as views in the sandbox.
 * 2. A flow's `source`: the auto_loader's declared columns, else those DuckDB infers from the first
 *    landed files (as a batch reads them); an upstream table's schema for a `stream` source.
 * 3. Describe; refuse on the first query DuckDB cannot bind.
 */

export interface SkippedQuery {
  /** The dataset, or `dataset.flow` for a streaming table's flow. */
  readonly query: string;
  readonly reason: string;
}

/** Landed files a schema is inferred from: enough for the columns, never a whole backlog. */
const INFERENCE_FILES = 8;

/** DuckDB's errors that say the query itself is wrong, as opposed to the engine failing. */
const BIND_FAILURE = /^(Binder|Catalog|Conversion|Parser) Error: /;

export async function checkQueriesBind(
  pipeline: ValidatedPipeline,
  bucket: ObjectStore,
  /** The store at an auto_loader source's location. */
  locate: (location: string) => ObjectStore,
): Promise<SkippedQuery[]> {
  const catalog = new DatasetCatalog(pipeline, bucket);
  const schemas = new Map<string, Promise<StructType | undefined>>();
  const tableSchema = (name: string) => {
    if (!schemas.has(name))
      schemas.set(
        name,
        readTableShape(catalog, name).then((t) => t?.schema),
      );
    return schemas.get(name)!;
  };
  const skipped: SkippedQuery[] = [];
  for (const name of pipeline.graph.levels.flat()) {
    const dataset = catalog.dataset(name);
    const queries =
      dataset.type === "streaming_table"
        ? dataset.flows.map((flow) => ({ query: `${name}.${flow.name}`, what: `flow ${flow.name}`, flow }))
        : [{ query: name, what: `${dataset.type.replace("_", " ")} ${name}`, flow: undefined }];
    for (const { query, what, flow } of queries) {
      const sandbox = await Sandbox.open({ namespace: pipeline.definition });
      try {
        const inputs = await inputsOf(catalog, sandbox, name, flow, tableSchema, locate);
        if ("unknown" in inputs) {
          skipped.push({ query, reason: inputs.unknown });
          continue;
        }
        const output = await bind(
          sandbox,
          flow?.sql ?? (dataset as { sql: string }).sql,
          what,
          query,
          inputs.relations,
        );
        // Readers downstream see the table as this run would leave it (a view computes, stores nothing).
        if (dataset.type === "materialized_view") schemas.set(name, Promise.resolve(output));
        if (dataset.type === "streaming_table")
          schemas.set(name, Promise.resolve(withColumns(await tableSchema(name), output)));
      } finally {
        await sandbox.close();
      }
    }
  }
  return skipped;
}

async function bind(
  sandbox: Sandbox,
  sql: string,
  what: string,
  query: string,
  relations: readonly DescribedRelation[],
): Promise<StructType> {
  try {
    return await describeQuery(sandbox, sql, what, relations);
  } catch (error) {
    if (!(error instanceof Error) || error.constructor !== Error || !BIND_FAILURE.test(error.message))
      throw error;
    throw new QueryDoesNotBindError(query, what, error);
  }
}

type Inputs = { readonly relations: DescribedRelation[] } | { readonly unknown: string };

async function inputsOf(
  catalog: DatasetCatalog,
  sandbox: Sandbox,
  dataset: string,
  flow: FlowDefinition | undefined,
  tableSchema: (name: string) => Promise<StructType | undefined>,
  locate: (location: string) => ObjectStore,
): Promise<Inputs> {
  const relations: DescribedRelation[] = [];
  if (flow) {
    const source = await sourceColumns(catalog, sandbox, dataset, flow, tableSchema, locate);
    if ("unknown" in source) return source;
    relations.push({ name: MICRO_BATCH_NAME, columns: source.columns });
  }
  for (const read of catalog.snapshotReads(dataset, flow?.name)) {
    if (read.kind === "view") {
      relations.push({ name: read.name, sql: read.sql });
      continue;
    }
    const schema = await tableSchema(read.name);
    if (!schema) return { unknown: `table ${read.name} has no known columns yet` };
    relations.push({ name: read.name, columns: columnsOf(schema) });
  }
  return { relations };
}

async function sourceColumns(
  catalog: DatasetCatalog,
  sandbox: Sandbox,
  dataset: string,
  flow: FlowDefinition,
  tableSchema: (name: string) => Promise<StructType | undefined>,
  locate: (location: string) => ObjectStore,
): Promise<{ readonly columns: [string, string][] } | { readonly unknown: string }> {
  const source = flow.source;
  // A stateful flow's SQL is the operator's definition (`window(…)`, a join's watermarks), not a
  // query DuckDB runs as written: its batch binds what the operator compiles it to.
  const kind = catalog.flowPlan(flow.name).kind;
  if (kind === "windowed" || kind === "join" || kind === "dedup")
    return { unknown: `a stateful flow's query (${kind}) is bound by its batch` };
  if (source.type === "stream") {
    const schema = await tableSchema(source.dataset);
    if (!schema) return { unknown: `table ${source.dataset} has no known columns yet` };
    const feed = readsChangeFeed(catalog.pipeline.definition, flow) ? CHANGE_FEED_COLUMNS : [];
    return { columns: [...columnsOf(schema), ...feed.map(([c, t]): [string, string] => [c, t])] };
  }
  if (source.type !== "auto_loader")
    return { unknown: `a ${source.type} source's columns are known at run time` };
  if (source.schema) return { columns: Object.entries(source.schema) };
  const store = locate(source.path);
  const keys = [...(await listSourceFiles(store)).keys()].sort().slice(0, INFERENCE_FILES);
  if (keys.length === 0) return { unknown: `no file has landed at ${source.path} yet` };
  const origin = { flow: flow.name, dataset, location: source.path };
  const files = await landFiles(store, sandbox, keys, origin, source.format);
  await readRecords(sandbox, files, {
    flow: flow.name,
    format: source.format,
    goodTable: "__ebb_inferred_source",
    badTable: "__ebb_inferred_bad",
    lazy: true,
  });
  const described = await sandbox.rows(`DESCRIBE "__ebb_inferred_source"`);
  return { columns: described.map((row) => [String(row["column_name"]), String(row["column_type"])]) };
}

/** A streaming table after a flow appends `output`: its columns, then the output's new ones. */
function withColumns(table: StructType | undefined, output: StructType): StructType {
  if (!table) return output;
  const known = new Set(table.fields.map((field) => field.name));
  return { ...table, fields: [...table.fields, ...output.fields.filter((field) => !known.has(field.name))] };
}

function columnsOf(schema: StructType): [string, string][] {
  return schema.fields.map((field) => [field.name, duckType(field.type)]);
}
