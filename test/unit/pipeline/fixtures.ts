/**
 * A small valid pipeline to mutate in tests: files land → `raw_orders` (auto_loader) → `orders`
 * (stream, joined with the `customers` snapshot) → `daily_totals` (materialized view) → `recent` (view).
 */
export function samplePipeline(): Record<string, unknown> & { datasets: Record<string, unknown>[] } {
  return {
    name: "Sales",
    catalog: "main",
    schema: "sales",
    configuration: { "pipelines.rewind.enabled": "true" },
    datasets: [
      {
        name: "raw_orders",
        type: "streaming_table",
        flows: [
          {
            name: "ingest_orders",
            source: { type: "auto_loader", path: "s3://landing-bucket/orders/", format: "json" },
            sql: "SELECT * FROM source",
          },
        ],
      },
      {
        name: "customers",
        type: "streaming_table",
        flows: [
          {
            name: "ingest_customers",
            source: { type: "delta", path: "s3://crm-bucket/tables/customers" },
            sql: "SELECT id, name FROM source",
          },
        ],
      },
      {
        name: "orders",
        type: "streaming_table",
        flows: [
          {
            name: "clean_orders",
            source: { type: "stream", dataset: "raw_orders" },
            sql: "SELECT s.*, c.name FROM source s JOIN customers c ON s.customer_id = c.id WHERE s.amount > 0",
          },
        ],
      },
      {
        name: "daily_totals",
        type: "materialized_view",
        sql: "SELECT day, sum(amount) AS total FROM main.sales.orders GROUP BY day",
      },
      { name: "recent", type: "view", sql: "SELECT * FROM daily_totals WHERE day > current_date - 7" },
    ],
  };
}

export const SAMPLE_YAML = `
name: Sales
catalog: main
schema: sales
configuration:
  pipelines.rewind.betaEnabled: "true"
datasets:
  - name: raw_orders
    type: streaming_table
    flows:
      - name: ingest_orders
        source: { type: auto_loader, path: "s3://landing-bucket/orders/", format: JSON }
        sql: SELECT * FROM source
        options: { max_files_per_batch: 100, bad_records: quarantine }
  - name: orders
    type: streaming_table
    reset_mode: truncate
    partition_by: [day]
    properties: { delta.enableChangeDataFeed: "true" }
    flows:
      - name: clean_orders
        source: { type: stream, dataset: raw_orders }
        sql: |
          -- the batch, filtered
          SELECT * FROM source WHERE amount > 0
`;
