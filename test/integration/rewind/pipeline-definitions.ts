/**
 * The pipeline users try first: files land → `raw` (auto_loader) → `cleaned`
 * (streaming table) → `totals` (aggregate materialized view). `cleanedSql` is what a deploy changes:
 * the good transform doubles `amount`, the bad one triples it.
 */
export const GOOD_SQL = "SELECT id, amount * 2 AS amount2, region FROM source";
export const BAD_SQL = "SELECT id, amount * 3 AS amount2, region FROM source";

export function scenarioPipeline(
  landingUri: string,
  cleanedSql = GOOD_SQL,
  configuration: Record<string, string> = {},
) {
  return {
    name: "Rewind scenario",
    catalog: "main",
    schema: "shop",
    configuration: { "pipelines.rewind.enabled": "true", ...configuration },
    datasets: [
      {
        name: "raw",
        type: "streaming_table",
        flows: [
          {
            name: "ingest",
            source: {
              type: "auto_loader",
              path: landingUri,
              format: "json",
              schema: { id: "BIGINT", amount: "BIGINT", region: "VARCHAR" },
            },
            sql: "SELECT id, amount, region FROM source",
          },
        ],
      },
      {
        name: "cleaned",
        type: "streaming_table",
        flows: [{ name: "clean", source: { type: "stream", dataset: "raw" }, sql: cleanedSql }],
      },
      {
        name: "totals",
        type: "materialized_view",
        sql: "SELECT region, sum(amount2) AS total, count(*) AS n FROM cleaned GROUP BY region",
      },
    ],
  };
}

/**
 * What a deploy adds to the scenario: `flagged`, a streaming table of `cleaned`'s large orders, and
 * `flagged_view`, a view over it.
 */
export function withFlagged(definition: ReturnType<typeof scenarioPipeline>) {
  return {
    ...definition,
    datasets: [
      ...definition.datasets,
      {
        name: "flagged",
        type: "streaming_table",
        flows: [
          {
            name: "flag",
            source: { type: "stream", dataset: "cleaned" },
            sql: "SELECT id, amount2, region FROM source WHERE amount2 > 50",
          },
        ],
      },
      { name: "flagged_view", type: "view", sql: "SELECT id, region FROM flagged" },
    ],
  };
}
