import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DeltaTable } from "../../../shared/delta/delta-table.ts";
import { DuckSession } from "../../../shared/duck/duck-session.ts";
import { MemoryObjectStore } from "../../../shared/object-store/memory-object-store.ts";
import { listAllKeys } from "../../../shared/object-store/object-store.ts";
import { withPrefix } from "../../../shared/object-store/prefixed-object-store.ts";
import { countingStore, field, ManualClock, schemaOf } from "./delta-test-kit.ts";

const schema = schemaOf(field("id", "long", false), field("region", "string"), field("amount", "integer"));

describe("change data feed written by UPDATE, DELETE, MERGE", () => {
  let duck: DuckSession;
  beforeAll(async () => {
    duck = await DuckSession.open();
  });
  afterAll(() => duck.close());

  it("round-trips through the reader's tableChanges, with the changeDataFeed feature", async () => {
    const clock = new ManualClock();
    const store = new MemoryObjectStore(clock.read);
    const table = await DeltaTable.create(
      store,
      {
        schema,
        partitionColumns: ["region"],
        properties: { "delta.enableChangeDataFeed": "true" },
        rows: {
          rows: [
            { id: 1, region: "eu", amount: 10 },
            { id: 2, region: "eu", amount: 20 },
            { id: 3, region: "us", amount: 30 },
          ],
        },
      },
      { clock: clock.read, duck },
    );
    expect(table.snapshot.protocol).toEqual({
      minReaderVersion: 1,
      minWriterVersion: 7,
      writerFeatures: ["changeDataFeed", "inCommitTimestamp", "invariants"],
    });
    await table.update({ set: { amount: "amount + 1" }, where: "id = 1" }); // v1
    await table.delete("id = 3"); // v2
    await table.merge({
      source: {
        rows: [
          { id: 2, region: "eu", amount: 99 },
          { id: 4, region: "us", amount: 40 },
        ],
      },
      on: ["id"],
      whenMatched: { update: "all" },
      whenNotMatched: "insert",
    }); // v3
    await table.append({ rows: [{ id: 5, region: "us", amount: 50 }] }); // v4: no cdc, read from the add

    const cdcFiles = (await listAllKeys(store, "_change_data/")).map((o) => o.key);
    expect(
      cdcFiles.every((key) => /^_change_data\/region=(eu|us)\/cdc-[0-9a-f-]{36}\.snappy\.parquet$/.test(key)),
    ).toBe(true);

    const changes = (await table.changes(0))
      .map((r) => [Number(r._commit_version), r._change_type, Number(r.id), r.region, r.amount])
      .sort((a, b) => String(a).localeCompare(String(b)));
    expect(changes).toEqual(
      [
        [0, "insert", 1, "eu", 10],
        [0, "insert", 2, "eu", 20],
        [0, "insert", 3, "us", 30],
        [1, "update_preimage", 1, "eu", 10],
        [1, "update_postimage", 1, "eu", 11],
        [2, "delete", 3, "us", 30],
        [3, "update_preimage", 2, "eu", 20],
        [3, "update_postimage", 2, "eu", 99],
        [3, "insert", 4, "us", 40],
        [4, "insert", 5, "us", 50],
      ].sort((a, b) => String(a).localeCompare(String(b))),
    );
    await table.close();
  });

  it("dates change rows as the protocol does: the in-commit timestamp, else the log file's modification time", async () => {
    // The store's clock (file times) runs 250 ms behind the writer's, as a slow commit would.
    const clock = new ManualClock();
    const files = { now: clock.read() };
    const store = new MemoryObjectStore(() => files.now);
    const properties = (ict: boolean) => ({
      "delta.enableChangeDataFeed": "true",
      "delta.enableInCommitTimestamps": String(ict),
    });
    for (const ict of [true, false]) {
      const root = `${ict}/`;
      const table = await DeltaTable.create(
        withPrefix(store, root),
        { schema, properties: properties(ict), rows: { rows: [{ id: 1, region: "eu", amount: 1 }] } },
        { clock: clock.read, duck },
      );
      files.now = clock.read() + 250;
      await table.append({ rows: [{ id: 2, region: "eu", amount: 2 }] });
      const info = table.snapshot.commitInfo!;
      const stamps = new Set((await table.changes(1)).map((r) => Date.parse(String(r._commit_timestamp))));
      expect(stamps).toEqual(new Set([ict ? info.inCommitTimestamp : files.now]));
      expect(info.timestamp).not.toBe(files.now);
      await table.close();
    }
  });

  it("writes no change files when the feed is off", async () => {
    const store = new MemoryObjectStore();
    const table = await DeltaTable.create(
      store,
      { schema, rows: { rows: [{ id: 1, region: "eu", amount: 1 }] } },
      { duck },
    );
    await table.update({ set: { amount: "2" } });
    expect(table.snapshot.protocol.writerFeatures).toEqual(["inCommitTimestamp", "invariants"]);
    expect(await listAllKeys(store, "_change_data/")).toEqual([]);
    await table.close();
  });

  it("reads the feed of a long log's last commits listing only those commits", async () => {
    const clock = new ManualClock();
    const store = new MemoryObjectStore(clock.read);
    const table = await DeltaTable.create(
      store,
      { schema, properties: { "delta.enableChangeDataFeed": "true", "delta.checkpointInterval": "20" } },
      { clock: clock.read, duck },
    );
    for (let id = 1; id <= 60; id++) {
      clock.advance(1000);
      await table.append({ rows: [{ id, region: "eu", amount: id }] });
    }
    const counted = countingStore(store);
    const reader = await DeltaTable.open(counted.store, { duck });
    counted.listed.length = 0;
    const changes = await reader.changes(56, 60);
    expect(changes.map((row) => [Number(row.id), row._change_type, Number(row._commit_version)])).toEqual(
      [56, 57, 58, 59, 60].map((v) => [v, "insert", v]),
    );
    // The five commits and a page's first name past them (twice: the range, the end's snapshot), not 61.
    expect(counted.listed.length).toBeLessThanOrEqual(20);
    await reader.close();
    await table.close();
  });
});
