import { assertWritableColumnNames, type StructType } from "../delta/index.ts";
import type { ValidatedPipeline } from "../pipeline/validate-pipeline.ts";
import { DatasetCatalog } from "./dataset-catalog.ts";
import { IncompatibleSchemaChangeError } from "./errors.ts";
import { previewFlowOutput } from "./flow-preview.ts";
import { Sandbox } from "./sandbox.ts";
import { planSchemaEvolution } from "./schema-evolution.ts";
import { readTableShape } from "./table-shape.ts";
import type { ObjectStore } from "../object-store/object-store.ts";

/**
 * The up-front half of schema evolution (schema-evolution.ts): before an update starts, each flow
 * that will append to an existing table has its query described over empty relations shaped like
 * what it reads (flow-preview.ts), upstream first, so an upstream's added columns reach its
 * readers. A query that no longer fits its table is refused here, before anything runs, with the
 * same error a batch would meet. What cannot be described this way (an inferred file schema, a view
 * in the way, an external Delta source) is left to the batch's own check.
 *
 * 1. Skip datasets the update resets (their tables are recreated from the new query).
 * 2. For each streaming flow, upstream first: its source's shape, its query's output, the plan.
 * 3. Refuse on the first incompatible flow.
 */

export interface SchemaCheckScope {
  /** Datasets whose flows run in the update. */
  readonly run: readonly string[];
  /** Datasets the update resets before running (their current schema does not matter). */
  readonly reset: readonly string[];
}

export async function checkSchemaChanges(
  pipeline: ValidatedPipeline,
  bucket: ObjectStore,
  scope: SchemaCheckScope,
): Promise<void> {
  const catalog = new DatasetCatalog(pipeline, bucket);
  const schemas = new Map<string, StructType | undefined>();
  const empty = new Set<string>();
  const tableSchema = async (name: string): Promise<StructType | undefined> => {
    if (!schemas.has(name)) {
      const dataset = pipeline.definition.datasets.find((d) => d.name === name);
      let schema: StructType | undefined;
      if (dataset && dataset.type !== "view" && !scope.reset.includes(name)) {
        const table = await readTableShape(catalog, name);
        schema = table?.schema;
        if (table?.empty) empty.add(name);
      }
      schemas.set(name, schema);
    }
    return schemas.get(name);
  };
  const runs = new Set(scope.run);
  let sandbox: Sandbox | undefined;
  const open = async () => (sandbox ??= await Sandbox.open({ namespace: pipeline.definition }));
  try {
    for (const name of pipeline.graph.levels.flat()) {
      const dataset = pipeline.definition.datasets.find((d) => d.name === name);
      if (dataset?.type !== "streaming_table" || !runs.has(name)) continue;
      const table = await tableSchema(name);
      if (!table) continue;
      for (const flow of dataset.flows) {
        // An AUTO CDC flow's rows are change events, not the target's rows: its batch checks the
        // target columns the events map to. A stream-stream join's rows are its batch's to check.
        if (flow.auto_cdc || flow.join) continue;
        const output = await previewFlowOutput(open, catalog, name, flow, tableSchema);
        if (!output) continue;
        const evolution = planSchemaEvolution(table, output, empty.has(name));
        if (evolution.kind === "incompatible")
          throw new IncompatibleSchemaChangeError(name, evolution.problems);
        // Readers downstream see the evolved table.
        if (evolution.kind === "additive" || evolution.kind === "replaced") {
          assertWritableColumnNames(evolution.schema.fields, name);
          schemas.set(name, evolution.schema);
        }
      }
    }
  } finally {
    await sandbox?.close();
  }
}
