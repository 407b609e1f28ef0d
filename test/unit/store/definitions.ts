import { parseDefinition } from "../../../shared/pipeline/parse-definition.ts";
import type { PipelineDefinition } from "../../../shared/pipeline/definition-schema.ts";

let schemas = 0;

/** A schema name no other test uses. */
export function uniqueSchema(): string {
  return `sales_${process.pid}_${Date.now().toString(36)}_${schemas++}`;
}

/**
 * A small valid definition; `name` tells the versions of one pipeline apart. Its table is in a
 * schema of its own unless `schema` is given (a table has one owner, and tests share the store).
 */
export function definitionNamed(
  name: string,
  columns: readonly string[] = ["id", "amount"],
  schema = uniqueSchema(),
): PipelineDefinition {
  return parseDefinition({
    name,
    catalog: "main",
    schema,
    configuration: { "pipelines.rewind.enabled": "true" },
    datasets: [
      {
        name: "orders",
        type: "streaming_table",
        flows: [
          {
            name: "ingest",
            source: {
              type: "auto_loader",
              path: "s3://landing-bucket/orders/",
              format: "csv",
              // Column order matters for CSV; the stored definition must keep it.
              schema: Object.fromEntries(columns.map((column) => [column, "VARCHAR"])),
            },
            sql: "SELECT * FROM source",
          },
        ],
      },
    ],
  });
}

/** A valid definition declaring `count` streaming tables (`t0`, `t1`, …) in `schema`. */
export function definitionWithTables(
  name: string,
  count: number,
  schema = uniqueSchema(),
): PipelineDefinition {
  const [dataset] = definitionNamed(name, undefined, schema).datasets;
  return parseDefinition({
    name,
    catalog: "main",
    schema,
    configuration: { "pipelines.rewind.enabled": "true" },
    datasets: Array.from({ length: count }, (_, i) => ({ ...dataset, name: `t${i}` })),
  });
}
