import { readdir, readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Snapshot } from "../../../shared/delta/read/snapshot.ts";
import { DeltaTable } from "../../../shared/delta/delta-table.ts";
import { checkpointKey, commitKey, LAST_CHECKPOINT_KEY } from "../../../shared/delta/log/log-paths.ts";
import { loadSnapshot } from "../../../shared/delta/read/snapshot-loader.ts";
import { cleanUpExpiredLogs, planLogCleanup } from "../../../shared/delta/log/log-cleanup.ts";
import { UnsupportedFeatureError, VersionNotFoundError } from "../../../shared/delta/errors.ts";
import type { AddFile } from "../../../shared/delta/log/actions.ts";
import { encodeCommit } from "../../../shared/delta/log/commit-encoding.ts";
import { DuckSession } from "../../../shared/duck/duck-session.ts";
import { ScratchFolder } from "../../../shared/duck/scratch-folder.ts";
import { MemoryObjectStore } from "../../../shared/object-store/memory-object-store.ts";
import { listAllKeys, type ObjectStore } from "../../../shared/object-store/object-store.ts";
import { exemptFromProtocolCheck } from "../../support/protocol-check.ts";
import { field, ManualClock, schemaOf } from "./delta-test-kit.ts";
import { snapshotTombstones } from "../../../shared/delta/log/log-replay.ts";

const DAT = path.resolve(import.meta.dirname, "../../../../shared/conformance/delta/dat-v0.0.2");

async function loadFolder(folder: string, store: ObjectStore, prefix = ""): Promise<void> {
  for (const entry of await readdir(folder, { withFileTypes: true })) {
    const full = path.join(folder, entry.name);
    if (entry.isDirectory()) await loadFolder(full, store, `${prefix}${entry.name}/`);
    else await store.put(`${prefix}${entry.name}`, await readFile(full));
  }
}

const schema = schemaOf(field("id", "long", false), field("day", "date"), field("value", "string"));

/** The parts of a snapshot a checkpoint must preserve, in comparable form. */
export function comparable(snapshot: Snapshot) {
  const files = [...snapshot.files.values()]
    .map((f) => ({
      path: f.path,
      size: f.size,
      partitionValues: f.partitionValues,
      stats: f.stats ? JSON.parse(f.stats) : null,
      modificationTime: f.modificationTime,
    }))
    .sort((a, b) => a.path.localeCompare(b.path));
  const txns = [...snapshot.txns.values()].map((t) => [t.appId, t.version]).sort();
  return { version: snapshot.version, protocol: snapshot.protocol, metadata: snapshot.metadata, files, txns };
}

describe("checkpoints", () => {
  let duck: DuckSession;
  beforeAll(async () => {
    duck = await DuckSession.open();
  });
  afterAll(() => duck.close());

  it("are written every delta.checkpointInterval commits and load like a full replay", async () => {
    const clock = new ManualClock();
    const store = new MemoryObjectStore(clock.read);
    const table = await DeltaTable.create(
      store,
      { schema, partitionColumns: ["day"], properties: { "delta.checkpointInterval": "3" } },
      { clock: clock.read, duck },
    );
    const results = [];
    for (let i = 1; i <= 7; i++) {
      clock.advance(1000);
      results.push(
        await table.append(
          {
            rows: [
              { id: i, day: `2026-01-0${(i % 3) + 1}`, value: `v${i}` },
              { id: 100 + i, day: null, value: "x" },
            ],
          },
          { txn: { appId: `app-${i % 2}`, version: i } },
        ),
      );
      if (i === 4) await table.delete("id = 2");
    }
    expect(
      results
        .filter((r) => r.status === "committed" && r.checkpoint)
        .map((r) => r.status === "committed" && r.checkpoint?.version),
    ).toEqual([3, 6]);
    expect(await store.head(checkpointKey(3))).toBeDefined();
    const last = JSON.parse(new TextDecoder().decode(await store.get(LAST_CHECKPOINT_KEY)));
    expect(last).toMatchObject({
      version: 6,
      numOfAddFiles: (await loadSnapshot(store, { version: 6 })).files.size,
    });

    expect(table.snapshot.version).toBe(8); // 7 appends and a DELETE
    const fromCheckpoint = await loadSnapshot(store);
    const replayOnly = await withoutCheckpoints(store);
    const fromLog = await loadSnapshot(replayOnly);
    expect(comparable(fromCheckpoint)).toEqual(comparable(fromLog));
    // The checkpoint's tombstones are read apart, when asked for.
    const tombstones = async (snapshot: Snapshot) => [...(await snapshotTombstones(snapshot)).keys()].sort();
    expect(await tombstones(fromCheckpoint)).toEqual(await tombstones(fromLog));
    expect(fromCheckpoint.commitTombstones.size).toBeLessThan((await tombstones(fromLog)).length);
    expect(comparable(fromCheckpoint)).toEqual(comparable(table.snapshot));
    // the checkpoint alone (version 6) also matches the replay at 6
    expect(comparable(await loadSnapshot(store, { version: 6 }))).toEqual(
      comparable(await loadSnapshot(replayOnly, { version: 6 })),
    );
    await table.close();
  });

  it("is plain parquet with the protocol's checkpoint schema, readable by DuckDB without the delta extension", async () => {
    const clock = new ManualClock();
    const store = new MemoryObjectStore(clock.read);
    const table = await DeltaTable.create(
      store,
      { schema, partitionColumns: ["day"], rows: { rows: [{ id: 1, day: "2026-01-01", value: "a" }] } },
      { clock: clock.read, duck },
    );
    await table.delete("id = 1");
    const checkpoint = await table.checkpoint();
    expect(checkpoint).toMatchObject({ version: 1, size: 3, numOfAddFiles: 0 });
    const scratch = await ScratchFolder.create();
    try {
      const local = path.join(scratch.dir, "cp.parquet");
      await writeFile(local, await store.get(checkpointKey(1)));
      const rows = await duck.rows(
        `SELECT protocol.minWriterVersion AS writer, metaData.partitionColumns AS parts, remove.path AS removed, ` +
          `remove.deletionTimestamp AS deleted_at, map_extract(remove.partitionValues, 'day') AS day FROM read_parquet('${local}')`,
      );
      expect(rows.find((r) => r.writer !== null)?.writer).toBe(7);
      expect(rows.find((r) => r.parts !== null)?.parts).toEqual(["day"]);
      const tombstone = rows.find((r) => r.removed !== null);
      expect(tombstone?.removed).toMatch(/^day=2026-01-01\/part-.*\.snappy\.parquet$/);
      expect(tombstone?.day).toEqual(["2026-01-01"]);
      const schemaRows = await duck.rows(
        `SELECT name, converted_type FROM parquet_schema('${local}') WHERE name IN ('partitionValues', 'stats', 'configuration')`,
      );
      expect(schemaRows.map((r) => [r.name, r.converted_type]).sort()).toEqual([
        ["configuration", "MAP"],
        ["configuration", "UTF8"], // domainMetadata.configuration is a JSON string
        ["partitionValues", "MAP"],
        ["partitionValues", "MAP"],
        ["stats", "UTF8"],
      ]);
    } finally {
      await scratch.dispose();
      await table.close();
    }
  });

  it("drops tombstones older than delta.deletedFileRetentionDuration", async () => {
    const clock = new ManualClock();
    const store = new MemoryObjectStore(clock.read);
    const table = await DeltaTable.create(
      store,
      {
        schema,
        rows: { rows: [{ id: 1 }] },
        properties: { "delta.deletedFileRetentionDuration": "interval 1 hour" },
      },
      { clock: clock.read, duck },
    );
    await table.delete();
    clock.advance(2 * 3_600_000);
    await table.append({ rows: [{ id: 2 }] });
    await table.checkpoint();
    const snapshot = await loadSnapshot(store);
    expect((await snapshotTombstones(snapshot)).size).toBe(0);
    expect(snapshot.files.size).toBe(1);
    await table.close();
  });
});

async function withoutCheckpoints(store: MemoryObjectStore): Promise<MemoryObjectStore> {
  const copy = new MemoryObjectStore();
  for (const object of await listAllKeys(store, "")) {
    if (object.key.includes(".checkpoint.") || object.key === LAST_CHECKPOINT_KEY) continue;
    await copy.put(object.key, await store.get(object.key));
  }
  return copy;
}

describe("metadata cleanup after checkpoints", () => {
  const HOUR = 3_600_000;
  let duck: DuckSession;
  beforeAll(async () => {
    duck = await DuckSession.open();
  });
  afterAll(() => duck.close());
  const info = (key: string, lastModified: number) => ({ key, size: 1, lastModified, etag: "e" });

  it("plans to drop log entries older than the retention, keeping a checkpoint for the oldest kept version", () => {
    const log = [
      info("_delta_log/00000000000000000000.json", 0),
      info("_delta_log/00000000000000000001.json", HOUR),
      info("_delta_log/00000000000000000002.json", 2 * HOUR),
      info("_delta_log/00000000000000000002.checkpoint.parquet", 2 * HOUR),
      info("_delta_log/00000000000000000003.json", 3 * HOUR),
      info("_delta_log/00000000000000000004.json", 10 * HOUR),
      info("_delta_log/00000000000000000004.checkpoint.parquet", 10 * HOUR),
      info("_delta_log/_last_checkpoint", 10 * HOUR),
    ];
    expect(planLogCleanup(log, 11 * HOUR, 5 * HOUR)).toEqual({
      earliestKeptVersion: 2,
      keysToDelete: ["_delta_log/00000000000000000000.json", "_delta_log/00000000000000000001.json"],
    });
    expect(planLogCleanup(log, 11 * HOUR, 10 * HOUR)).toEqual({
      earliestKeptVersion: undefined,
      keysToDelete: [],
    });
  });

  it("lists the log only up to its first commit newer than the cutoff, deleting what a full listing would", async () => {
    const clock = new ManualClock();
    // A log of names only: its files are one byte, not a table to check against the protocol.
    const store = exemptFromProtocolCheck(new MemoryObjectStore(clock.read));
    const put = (key: string) => store.put(`_delta_log/${key}`, new Uint8Array([1]));
    for (let version = 0; version < 2_500; version++) {
      // The first 25 commits are 2 hours old; the rest, 2,475 of them, are new.
      if (version === 25) clock.advance(2 * HOUR);
      const name = String(version).padStart(20, "0");
      if (version % 10 === 0 && version > 0) await put(`${name}.checkpoint.parquet`);
      await put(`${name}.json`);
    }
    await put("_last_checkpoint");
    const everything = await listAllKeys(store, "_delta_log/");
    const expected = planLogCleanup(everything, clock.read(), HOUR);
    expect(expected.keysToDelete).toHaveLength(21); // versions 0-19 and the checkpoint of 10
    let lists = 0;
    const counted: ObjectStore = {
      get: (key) => store.get(key),
      getRange: (key, range) => store.getRange(key, range),
      put: (key, body) => store.put(key, body),
      putIfAbsent: (key, body) => store.putIfAbsent(key, body),
      putIfMatch: (key, body, etag) => store.putIfMatch(key, body, etag),
      head: (key) => store.head(key),
      delete: (key) => store.delete(key),
      deleteMany: (keys) => store.deleteMany(keys),
      list: (prefix, options) => {
        lists += 1;
        return store.list(prefix, options);
      },
    };
    expect(await cleanUpExpiredLogs(counted, clock.read(), HOUR)).toEqual(expected);
    expect(lists).toBe(1); // of the 3 pages the log fills
    expect(await store.head("_delta_log/00000000000000000020.checkpoint.parquet")).toBeDefined();
    expect(await store.head("_delta_log/00000000000000000019.json")).toBeUndefined();
  });

  it("runs after a due checkpoint: older versions are gone, the rest loads and has history", async () => {
    const clock = new ManualClock();
    const store = new MemoryObjectStore(clock.read);
    const table = await DeltaTable.create(
      store,
      {
        schema,
        properties: { "delta.checkpointInterval": "2", "delta.logRetentionDuration": "interval 1 hour" },
        rows: { rows: [{ id: 0 }] },
      },
      { clock: clock.read, duck },
    );
    await table.append({ rows: [{ id: 1 }] });
    await table.append({ rows: [{ id: 2 }] }); // version 2: checkpoint, nothing old enough yet
    clock.advance(2 * HOUR);
    await table.append({ rows: [{ id: 3 }] });
    const result = await table.append({ rows: [{ id: 4 }] }); // version 4: checkpoint, cleanup
    expect(result).toMatchObject({ checkpoint: { version: 4 }, logCleanup: { earliestKeptVersion: 2 } });
    await expect(loadSnapshot(store, { version: 1 })).rejects.toBeInstanceOf(VersionNotFoundError);
    expect((await loadSnapshot(store, { version: 2 })).files.size).toBe(3);
    expect((await table.history()).map((h) => h.version)).toEqual([4, 3, 2]);
    expect((await table.scan()).length).toBe(5);
    await table.close();
  });

  it("keep the table-feature lists of a reader-3 / writer-7 table", async () => {
    const clock = new ManualClock();
    const store = new MemoryObjectStore(clock.read);
    const table = await DeltaTable.create(
      store,
      {
        schema: schemaOf(field("id", "long", false), field("at", "timestamp_ntz")),
        properties: { "delta.enableChangeDataFeed": "true" },
        rows: { rows: [{ id: 1, at: "2026-01-01 10:00:00" }] },
      },
      { clock: clock.read, duck },
    );
    await table.append({ rows: [{ id: 2, at: null }] });
    const protocol = {
      minReaderVersion: 3,
      minWriterVersion: 7,
      readerFeatures: ["timestampNtz"],
      writerFeatures: ["changeDataFeed", "inCommitTimestamp", "invariants", "timestampNtz"],
    };
    expect(table.snapshot.protocol).toEqual(protocol);
    await table.checkpoint();
    await table.close();
    await store.deleteMany([commitKey(0), commitKey(1)]);
    expect((await loadSnapshot(store)).protocol).toEqual(protocol);
  });

  it("refuses a table with a writer feature Ebb does not write (row tracking), writing nothing", async () => {
    const clock = new ManualClock();
    const store = new MemoryObjectStore(clock.read);
    const table = await DeltaTable.create(
      store,
      { schema, rows: { rows: [{ id: 1, day: "2026-01-01", value: "a" }] } },
      { clock: clock.read, duck },
    );
    // What Spark writes when row tracking is enabled: the feature, and each add's row ids.
    const [add] = table.snapshot.files.values();
    await store.put(
      commitKey(1),
      encodeCommit([
        { commitInfo: { timestamp: clock.read() + 1, operation: "SET TBLPROPERTIES" } },
        {
          protocol: {
            minReaderVersion: 1,
            minWriterVersion: 7,
            writerFeatures: ["domainMetadata", "rowTracking"],
          },
        },
        {
          metaData: {
            ...table.snapshot.metadata,
            configuration: { "delta.enableRowTracking": "true" },
          },
        },
        { add: { ...add!, dataChange: false, baseRowId: 0, defaultRowCommitVersion: 1 } as AddFile },
      ]),
    );
    await expect(table.checkpoint()).rejects.toThrow(UnsupportedFeatureError);
    expect(await listAllKeys(store, "_delta_log/")).not.toContain(checkpointKey(1));
    await table.close();
  });

  it("never overwrites a checkpoint another writer wrote of the version", async () => {
    // Spark's table with its checkpoint of version 2, as its latest version.
    const store = new MemoryObjectStore();
    await loadFolder(path.join(DAT, "with_checkpoint/delta"), store);
    await store.delete(commitKey(3));
    const spark = await store.get(checkpointKey(2));
    const table = await DeltaTable.open(store, { duck });
    expect(table.snapshot.version).toBe(2);
    expect(await table.checkpoint()).toMatchObject({ version: 2, sizeInBytes: spark.byteLength });
    expect(Buffer.from(await store.get(checkpointKey(2))).equals(Buffer.from(spark))).toBe(true);
    await table.close();
  });
});
