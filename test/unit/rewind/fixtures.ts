import { SqlReferenceParser } from "../../../shared/pipeline/sql-references.ts";
import { validatePipeline, type ValidatedPipeline } from "../../../shared/pipeline/validate-pipeline.ts";
import { tablePropertiesError } from "../../../shared/delta/index.ts";

/**
 * The pipeline the rewind unit tests plan over:
 *
 *   files → raw (auto_loader) → clean (stream) → totals (materialized view) → recent (view)
 *                 │                  └──────────→ enriched (stream of clean)
 *                 └→ events (shared sink: eu_events owns region = 'eu', us_events owns region = 'us')
 */
export function rewindPipelineDefinition(
  configuration: Record<string, string> = {},
): Record<string, unknown> {
  return {
    name: "Rewind fixture",
    catalog: "main",
    schema: "sales",
    configuration: { "pipelines.rewind.enabled": "true", ...configuration },
    datasets: [
      {
        name: "raw",
        type: "streaming_table",
        flows: [
          {
            name: "ingest",
            source: { type: "auto_loader", path: "s3://landing/raw/", format: "json" },
            sql: "SELECT * FROM source",
          },
        ],
      },
      {
        name: "clean",
        type: "streaming_table",
        reset_mode: "TRUNCATE",
        flows: [{ name: "cleanse", source: { type: "stream", dataset: "raw" }, sql: "SELECT * FROM source" }],
      },
      { name: "totals", type: "materialized_view", sql: "SELECT count(*) AS n FROM clean" },
      { name: "recent", type: "view", sql: "SELECT * FROM totals" },
      {
        name: "enriched",
        type: "streaming_table",
        flows: [
          {
            name: "enrich",
            source: { type: "stream", dataset: "clean" },
            sql: "SELECT * FROM source",
            options: { starting_version: 0 },
          },
        ],
      },
      {
        name: "events",
        type: "streaming_table",
        flows: [
          {
            name: "eu_events",
            source: { type: "stream", dataset: "raw" },
            sql: "SELECT * FROM source",
            owns: "region = 'eu'",
          },
          {
            name: "us_events",
            source: { type: "stream", dataset: "raw" },
            sql: "SELECT * FROM source",
            owns: "region = 'us'",
          },
        ],
      },
    ],
  };
}

export async function rewindPipeline(configuration: Record<string, string> = {}): Promise<ValidatedPipeline> {
  const parser = await SqlReferenceParser.open();
  try {
    return await validatePipeline(rewindPipelineDefinition(configuration), parser, tablePropertiesError);
  } finally {
    parser.close();
  }
}
