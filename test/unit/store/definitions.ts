import { parseDefinition } from "../../../shared/pipeline/parse-definition.ts";
import type { PipelineDefinition } from "../../../shared/pipeline/definition-schema.ts";

/** A small valid definition; `name` tells the versions of one pipeline apart. */
export function definitionNamed(
  name: string,
  columns: readonly string[] = ["id", "amount"],
): PipelineDefinition {
  return parseDefinition({
    name,
    catalog: "main",
    schema: "sales",
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
