import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DuckSession } from "../../../shared/duck/duck-session.ts";
import { DeltaTable } from "../../../shared/delta/delta-table.ts";
import type { StructType } from "../../../shared/delta/table/schema.ts";
import { MemoryObjectStore } from "../../../shared/object-store/memory-object-store.ts";

/**
 * The walk-through of the seed article "Rolling Back Data with Delta Lake Time Travel", through the
 * TypeScript API: v0 three rows, v1 a corrupt UPDATE, v2 an accidental DELETE, history, RESTORE to
 * version 0 at v3, then a MERGE at v4.
 */
const inventory: StructType = {
  type: "struct",
  fields: [
    { name: "item_id", type: "integer", nullable: false, metadata: {} },
    { name: "quantity", type: "integer", nullable: false, metadata: {} },
    { name: "warehouse", type: "string", nullable: false, metadata: {} },
    { name: "timestamp", type: "timestamp", nullable: false, metadata: {} },
  ],
};

const T0 = Date.parse("2024-10-01T10:00:00Z");

function fakeClock(start: number, step = 5000): () => number {
  let now = start - step;
  return () => (now += step);
}

const plain = (rows: Record<string, unknown>[]) =>
  rows
    .map((r) => ({
      item_id: r.item_id,
      quantity: r.quantity,
      warehouse: r.warehouse,
      timestamp: (r.timestamp as Date).toISOString(),
    }))
    .sort((a, b) => Number(a.item_id) - Number(b.item_id));

describe("seed: rolling back with Delta time travel", () => {
  let duck: DuckSession;
  beforeAll(async () => {
    duck = await DuckSession.open();
  });
  afterAll(() => duck.close());

  it("updates, deletes, restores version 0 and merges", async () => {
    const clock = fakeClock(T0);
    const store = new MemoryObjectStore(clock);
    const table = await DeltaTable.create(
      store,
      {
        schema: inventory,
        rows: {
          rows: [
            { item_id: 1, quantity: 100, warehouse: "WH1", timestamp: "2024-10-01T10:00:00Z" },
            { item_id: 2, quantity: 200, warehouse: "WH2", timestamp: "2024-10-01T10:01:00Z" },
            { item_id: 3, quantity: 150, warehouse: "WH3", timestamp: "2024-10-01T10:02:00Z" },
          ],
        },
      },
      { clock, duck },
    );
    try {
      const v0 = plain(await table.scan());
      expect(v0.map((r) => [r.item_id, r.quantity, r.warehouse])).toEqual([
        [1, 100, "WH1"],
        [2, 200, "WH2"],
        [3, 150, "WH3"],
      ]);

      const update = await table.update({ set: { quantity: "-50" }, where: "item_id = 1" });
      expect(update).toMatchObject({ status: "committed", version: 1 });
      expect(plain(await table.scan()).map((r) => r.quantity)).toEqual([-50, 200, 150]);

      const del = await table.delete("item_id IS NOT NULL");
      expect(del).toMatchObject({ status: "committed", version: 2, operationMetrics: { numDeletedRows: 3 } });
      expect(await table.scan()).toEqual([]);

      const history = await table.history();
      expect(history.map((h) => [h.version, h.operation])).toEqual([
        [2, "DELETE"],
        [1, "UPDATE"],
        [0, "WRITE"],
      ]);
      expect(history[1]!.operationParameters).toEqual({ predicate: '["item_id = 1"]' });

      const restore = await table.restore({ to: { version: 0 }, extraParameters: { updateId: "u-1" } });
      expect(restore).toMatchObject({ status: "committed", version: 3 });
      expect(plain(await table.scan())).toEqual(v0);
      const [restored] = await table.history({ limit: 1 });
      expect(restored).toMatchObject({
        version: 3,
        operation: "RESTORE",
        // A number, as Spark writes it (a string there broke readers that compare it as one).
        operationParameters: { version: 0, timestamp: null, updateId: "u-1" },
        operationMetrics: {
          numRestoredFiles: "1",
          numRemovedFiles: "0",
          numOfFilesAfterRestore: "1",
        },
      });

      // Time travel by timestamp: the commit of version 0 and anything before version 1.
      const v0Time = (await table.snapshotAt({ version: 0 })).timestamp;
      expect(plain(await table.scan({ timestamp: v0Time + 1 }))).toEqual(v0);

      const merge = await table.merge({
        source: {
          rows: [
            { item_id: 2, quantity: 250, warehouse: "WH2", timestamp: "2024-10-01T10:03:00Z" },
            { item_id: 4, quantity: 300, warehouse: "WH4", timestamp: "2024-10-01T10:04:00Z" },
          ],
        },
        on: ["item_id"],
        whenMatched: { update: { quantity: "source.quantity", timestamp: "source.timestamp" } },
        whenNotMatched: "insert",
      });
      expect(merge).toMatchObject({
        status: "committed",
        version: 4,
        operationMetrics: { numTargetRowsUpdated: 1, numTargetRowsInserted: 1, numTargetRowsCopied: 2 },
      });
      expect(plain(await table.scan())).toEqual([
        { item_id: 1, quantity: 100, warehouse: "WH1", timestamp: "2024-10-01T10:00:00.000Z" },
        { item_id: 2, quantity: 250, warehouse: "WH2", timestamp: "2024-10-01T10:03:00.000Z" },
        { item_id: 3, quantity: 150, warehouse: "WH3", timestamp: "2024-10-01T10:02:00.000Z" },
        { item_id: 4, quantity: 300, warehouse: "WH4", timestamp: "2024-10-01T10:04:00.000Z" },
      ]);
      expect((await table.history()).map((h) => h.operation)).toEqual([
        "MERGE",
        "RESTORE",
        "DELETE",
        "UPDATE",
        "WRITE",
      ]);
    } finally {
      await table.close();
    }
  });
});
