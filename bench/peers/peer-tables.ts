import { DeltaTable, type StructType } from "../../shared/delta/index.ts";
import type { DuckSession } from "../../shared/duck/duck-session.ts";
import { LocalObjectStore } from "../../shared/object-store/local-object-store.ts";

/** The rows of the peers bench's tables: an id, a partition and a payload. */
export const PEER_TABLE_SCHEMA: StructType = {
  type: "struct",
  fields: [
    { name: "id", type: "long", nullable: false, metadata: {} },
    { name: "p", type: "integer", nullable: false, metadata: {} },
    { name: "payload", type: "string", nullable: true, metadata: {} },
  ],
};

/** A table whose `files` files (one per partition) were all removed at version 1: VACUUM's work. */
export async function removedFilesTable(duck: DuckSession, root: string, files: number): Promise<void> {
  const table = await DeltaTable.create(
    new LocalObjectStore(root),
    {
      schema: PEER_TABLE_SCHEMA,
      partitionColumns: ["p"],
      rows: {
        sql: `SELECT range AS id, CAST(range % ${files} AS INTEGER) AS p, 'x' AS payload FROM range(${files * 10})`,
      },
    },
    { duck },
  );
  await table.delete();
  await table.close();
}
