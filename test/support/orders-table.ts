/**
 * The `orders` streaming table the branch tests (HTTP API, CLI, browser) make pipelines of: JSON
 * files `{id, amount}` from `folder` through one flow's `sql` over `source`.
 */
export function ordersTable(folder: string, sql: string) {
  return {
    type: "streaming_table",
    name: "orders",
    flows: [
      {
        name: "ingest",
        source: {
          type: "auto_loader",
          path: folder,
          format: "json",
          schema: { id: "BIGINT", amount: "BIGINT" },
        },
        sql,
      },
    ],
  };
}
