import { readFile } from "node:fs/promises";
import { describe, expect, it } from "vitest";
import {
  commitTimestampAt,
  listCommits,
  versionAtTimestamp,
} from "../../../shared/delta/read/commit-history.ts";
import { readCommit } from "../../../shared/delta/log/commit-reader.ts";
import {
  InvalidLogFileError,
  TableNotFoundError,
  TimestampOutOfRangeError,
  UnsupportedFeatureError,
  VersionNotFoundError,
} from "../../../shared/delta/errors.ts";
import {
  checkpointKey,
  commitKey,
  LAST_CHECKPOINT_KEY,
  multiPartCheckpointKey,
} from "../../../shared/delta/log/log-paths.ts";
import { loadSnapshot } from "../../../shared/delta/read/snapshot-loader.ts";
import type { DuckSession } from "../../../shared/duck/duck-session.ts";
import type { ScratchFolder } from "../../../shared/duck/scratch-folder.ts";
import { quoteLiteral } from "../../../shared/duck/sql-text.ts";
import { MemoryObjectStore } from "../../../shared/object-store/memory-object-store.ts";
import { exemptFromProtocolCheck } from "../../support/protocol-check.ts";
import { add, commitInfo, protocol, remove, SCHEMA, tableWithCommits, writeCommit } from "./table-fixture.ts";
import { snapshotTombstones } from "../../../shared/delta/log/log-replay.ts";
import { openDuckAndScratch } from "../../support/duck-and-scratch.ts";

let duck: DuckSession;
let scratch: ScratchFolder;
openDuckAndScratch((opened) => ({ duck, scratch } = opened));

const text = (value: string) => new TextEncoder().encode(value);

/** Writes `select` as a parquet file with DuckDB and stores it under `key`. */
async function putParquet(store: MemoryObjectStore, key: string, select: string): Promise<void> {
  const file = await scratch.write(new Uint8Array(0), ".parquet");
  await duck.run(`COPY (${select}) TO ${quoteLiteral(file)} (FORMAT parquet)`);
  await store.put(key, new Uint8Array(await readFile(file)));
}

const PROTOCOL_TYPE = "STRUCT(minReaderVersion INTEGER, minWriterVersion INTEGER)";
const METADATA_TYPE =
  "STRUCT(id VARCHAR, format STRUCT(provider VARCHAR, options MAP(VARCHAR, VARCHAR)), schemaString VARCHAR, partitionColumns VARCHAR[], configuration MAP(VARCHAR, VARCHAR), createdTime BIGINT)";
const ADD_TYPE =
  "STRUCT(path VARCHAR, partitionValues MAP(VARCHAR, VARCHAR), size BIGINT, modificationTime BIGINT, dataChange BOOLEAN, stats VARCHAR, stats_parsed STRUCT(numRecords BIGINT, minValues STRUCT(id BIGINT), maxValues STRUCT(id BIGINT), nullCount STRUCT(id BIGINT)))";

/**
 * A two-part checkpoint at version 2 of `tableWithCommits`: part 1 holds protocol and metaData,
 * part 2 the files (stats only as `stats_parsed`, as with writeStatsAsJson=false) and a txn.
 * The parts have different columns, as Spark's do.
 */
async function writeTwoPartCheckpoint(store: MemoryObjectStore): Promise<void> {
  const metadata = `{'id': 'table-id', 'format': {'provider': 'parquet', 'options': MAP {}}, 'schemaString': ${quoteLiteral(SCHEMA)}, 'partitionColumns': [], 'configuration': MAP {'delta.checkpointInterval': '2'}, 'createdTime': 0}`;
  await putParquet(
    store,
    multiPartCheckpointKey(2, 1, 2),
    `SELECT {'minReaderVersion': 1, 'minWriterVersion': 2}::${PROTOCOL_TYPE} AS protocol, NULL::${METADATA_TYPE} AS metaData
     UNION ALL SELECT NULL, ${metadata}::${METADATA_TYPE}`,
  );
  const addRow = (path: string, min = "1", max = "3") =>
    `{'path': '${path}', 'partitionValues': MAP {}, 'size': 10, 'modificationTime': 5, 'dataChange': false, 'stats': NULL, 'stats_parsed': {'numRecords': 3, 'minValues': {'id': ${min}}, 'maxValues': {'id': ${max}}, 'nullCount': {'id': 0}}}::${ADD_TYPE}`;
  await putParquet(
    store,
    multiPartCheckpointKey(2, 2, 2),
    `SELECT ${addRow("f0")} AS add, NULL::STRUCT(appId VARCHAR, version BIGINT) AS txn
     UNION ALL SELECT ${addRow("f%201")}, NULL
     UNION ALL SELECT ${addRow("f2", "1717171717123456789", "9223372036854775807")}, NULL
     UNION ALL SELECT NULL, {'appId': 'app', 'version': 7}`,
  );
}

describe("loadSnapshot over commits", () => {
  it("loads the latest version and travels to earlier ones", async () => {
    const store = await tableWithCommits(4);
    const latest = await loadSnapshot(store);
    expect(latest.version).toBe(3);
    expect([...latest.files.keys()]).toEqual(["f0", "f1", "f2", "f3"]);
    expect(latest.commitInfo?.timestamp).toBe(1_300);
    expect(latest.timestamp).toBe(1_300);
    const v1 = await loadSnapshot(store, { version: 1 });
    expect([...v1.files.keys()]).toEqual(["f0", "f1"]);
    expect(v1.timestamp).toBe(1_100);
  });

  it("travels by timestamp to the latest commit at or before it", async () => {
    const store = await tableWithCommits(4);
    expect((await loadSnapshot(store, { timestamp: 1_100 })).version).toBe(1);
    expect((await loadSnapshot(store, { timestamp: 1_199 })).version).toBe(1);
    expect((await loadSnapshot(store, { timestamp: 99_999 })).version).toBe(3);
    expect(await versionAtTimestamp(store, 1_000)).toBe(0);
    await expect(loadSnapshot(store, { timestamp: 999 })).rejects.toThrow(TimestampOutOfRangeError);
    await expect(loadSnapshot(store, { timestamp: 999 })).rejects.toThrow(
      /before the earliest readable commit \(version 0/,
    );
  });

  it("finds the commit for every instant of a longer log", async () => {
    const store = await tableWithCommits(21);
    for (let v = 0; v <= 20; v++) {
      expect(await versionAtTimestamp(store, 1_000 + v * 100)).toBe(v);
      expect(await versionAtTimestamp(store, 1_000 + v * 100 + 99)).toBe(v);
    }
  });

  it("says which versions exist when asked for another", async () => {
    const store = await tableWithCommits(3);
    await expect(loadSnapshot(store, { version: 7 })).rejects.toThrow(VersionNotFoundError);
    await expect(loadSnapshot(store, { version: 7 })).rejects.toThrow(/versions 0 to 2 can be read/);
    await expect(readCommit(store, 5)).rejects.toThrow(VersionNotFoundError);
    expect((await readCommit(store, 1)).map((a) => Object.keys(a)[0])).toEqual(["commitInfo", "add"]);
  });

  it("reports a missing table and a bad commit line", async () => {
    await expect(loadSnapshot(new MemoryObjectStore(), { location: "s3://b/t/" })).rejects.toThrow(
      /no Delta table at s3:\/\/b\/t\//,
    );
    await expect(loadSnapshot(new MemoryObjectStore())).rejects.toThrow(TableNotFoundError);
    const store = exemptFromProtocolCheck(await tableWithCommits(2));
    await store.put(commitKey(2), text('{"commitInfo":{}}\n{"add": oops}\n'));
    await expect(loadSnapshot(store)).rejects.toThrow(InvalidLogFileError);
    await expect(loadSnapshot(store)).rejects.toThrow(/00000000000000000002\.json line 2/);
  });

  it("refuses a table whose reader protocol it does not implement", async () => {
    const store = await tableWithCommits(1);
    await writeCommit(store, 1, [
      protocol({ minReaderVersion: 3, minWriterVersion: 7, readerFeatures: ["deletionVectors"] }),
    ]);
    await expect(loadSnapshot(store)).rejects.toThrow(UnsupportedFeatureError);
    expect((await loadSnapshot(store, { checkReadable: false })).protocol.minReaderVersion).toBe(3);
  });

  it("lists commits with timestamps made strictly increasing, except in-commit timestamps", async () => {
    const clock = { now: 1_000 };
    const store = await tableWithCommits(2, clock);
    // Written when the file times say (500: a skewed clock), whatever commitInfo.timestamp says.
    clock.now = 500;
    await writeCommit(store, 2, [commitInfo(7_000)]);
    await writeCommit(store, 3, [commitInfo(9_000, { inCommitTimestamp: 400 })]);
    const commits = await listCommits(store);
    expect(commits.map((c) => c.timestamp)).toEqual([1_000, 1_100, 1_101, 400]);
    expect((await listCommits(store, { from: 1, to: 2 })).map((c) => c.version)).toEqual([1, 2]);
    expect(await commitTimestampAt(store, 2)).toBe(500);
    expect(await commitTimestampAt(store, 3)).toBe(400);
    await expect(commitTimestampAt(store, 4)).rejects.toThrow(VersionNotFoundError);
  });
});

describe("loadSnapshot with checkpoints", () => {
  async function checkpointedTable(): Promise<MemoryObjectStore> {
    const clock = { now: 1_000 };
    const store = await tableWithCommits(4, clock);
    clock.now = 1_400;
    await writeTwoPartCheckpoint(store);
    await writeCommit(store, 4, [commitInfo(1_400), remove("f%201"), add("f4")]);
    return store;
  }

  it("reads a multi-part checkpoint and replays the commits after it", async () => {
    const store = await checkpointedTable();
    const snapshot = await loadSnapshot(store);
    expect(snapshot.version).toBe(4);
    expect([...snapshot.files.keys()].sort()).toEqual(["f0", "f2", "f3", "f4"]);
    expect([...(await snapshotTombstones(snapshot)).keys()]).toEqual(["f 1"]);
    expect(snapshot.txns.get("app")?.version).toBe(7);
    expect(snapshot.metadata.configuration).toEqual({ "delta.checkpointInterval": "2" });
    expect(JSON.parse(snapshot.files.get("f0")!.stats!)).toEqual({
      numRecords: 3,
      minValues: { id: 1 },
      maxValues: { id: 3 },
      nullCount: { id: 0 },
    });
    // Bounds past 2^53 keep every digit (a double would round them outside the file's range).
    expect(snapshot.files.get("f2")!.stats).toBe(
      '{"numRecords":3,"minValues":{"id":1717171717123456789},"maxValues":{"id":9223372036854775807},"nullCount":{"id":0}}',
    );
  });

  it("needs no commit before the checkpoint, and refuses versions before it", async () => {
    const store = await checkpointedTable();
    await store.deleteMany([commitKey(0), commitKey(1), commitKey(2)]);
    expect((await loadSnapshot(store)).version).toBe(4);
    const atCheckpoint = await loadSnapshot(store, { version: 2 });
    expect(atCheckpoint.files.size).toBe(3);
    expect(atCheckpoint.commitInfo).toBeUndefined();
    await expect(loadSnapshot(store, { version: 1 })).rejects.toThrow(/versions 2 to 4 can be read/);
    expect(await versionAtTimestamp(store, 1_350)).toBe(3);
    await expect(versionAtTimestamp(store, 1_200)).rejects.toThrow(TimestampOutOfRangeError);
  });

  it("falls back to listing when _last_checkpoint is corrupt, stale or points at nothing", async () => {
    for (const hint of [
      "{not json",
      '{"version":0,"size":1}',
      '{"version":3,"size":4}',
      '{"version":2,"parts":2}',
    ]) {
      const store = exemptFromProtocolCheck(await checkpointedTable());
      await store.deleteMany([commitKey(0), commitKey(1)]);
      await store.put(LAST_CHECKPOINT_KEY, text(hint));
      const snapshot = await loadSnapshot(store);
      expect(snapshot.version, hint).toBe(4);
      expect(snapshot.txns.get("app")?.version, hint).toBe(7);
    }
  });

  it("names every readable version when the version asked for is past the end", async () => {
    const store = exemptFromProtocolCheck(await checkpointedTable());
    await store.put(LAST_CHECKPOINT_KEY, text('{"version":2,"parts":2}'));
    await expect(loadSnapshot(store, { version: 9 })).rejects.toThrow(/versions 0 to 4 can be read/);
  });

  it("reads adds whose struct has no stats field, and stats text that is not JSON, as written", async () => {
    // Ebb reads a checkpoint's stats apart from the rest of each add; these two shapes take the generic path.
    const metadata = `{'id': 'table-id', 'format': {'provider': 'parquet', 'options': MAP {}}, 'schemaString': ${quoteLiteral(SCHEMA)}, 'partitionColumns': [], 'configuration': MAP {}, 'createdTime': 0}::${METADATA_TYPE}`;
    const shapes = [
      {
        addType:
          "STRUCT(path VARCHAR, partitionValues MAP(VARCHAR, VARCHAR), size BIGINT, modificationTime BIGINT, dataChange BOOLEAN)",
        add: (path: string) =>
          `{'path': '${path}', 'partitionValues': MAP {}, 'size': 10, 'modificationTime': 5, 'dataChange': false}`,
        stats: undefined,
      },
      {
        addType:
          "STRUCT(path VARCHAR, partitionValues MAP(VARCHAR, VARCHAR), size BIGINT, modificationTime BIGINT, dataChange BOOLEAN, stats VARCHAR)",
        add: (path: string) =>
          `{'path': '${path}', 'partitionValues': MAP {}, 'size': 10, 'modificationTime': 5, 'dataChange': false, 'stats': 'not' || chr(1) || 'json'}`,
        stats: "not\x01json",
      },
    ];
    for (const shape of shapes) {
      const store = await tableWithCommits(3);
      await putParquet(
        store,
        checkpointKey(2),
        `SELECT {'minReaderVersion': 1, 'minWriterVersion': 2}::${PROTOCOL_TYPE} AS protocol, NULL::${METADATA_TYPE} AS metaData, NULL::${shape.addType} AS add
         UNION ALL SELECT NULL, ${metadata}, NULL
         UNION ALL SELECT NULL, NULL, ${shape.add("f0")}::${shape.addType}
         UNION ALL SELECT NULL, NULL, ${shape.add("f1")}::${shape.addType}`,
      );
      await store.deleteMany([commitKey(0), commitKey(1)]);
      const snapshot = await loadSnapshot(store);
      expect([...snapshot.files.keys()].sort()).toEqual(["f0", "f1"]);
      expect(snapshot.files.get("f1")).toEqual({
        path: "f1",
        partitionValues: {},
        size: 10,
        modificationTime: 5,
        dataChange: false,
        ...(shape.stats === undefined ? {} : { stats: shape.stats }),
      });
    }
  });

  it("ignores a checkpoint with a missing part", async () => {
    const store = await checkpointedTable();
    await store.delete(multiPartCheckpointKey(2, 2, 2));
    const snapshot = await loadSnapshot(store);
    expect(snapshot.txns.size).toBe(0);
    expect([...snapshot.files.keys()].sort()).toEqual(["f0", "f1", "f2", "f3", "f4"]);
  });
});

describe("checkpoint compression", () => {
  /** A table whose checkpoint at version 2 (files f0 and f1), written by DuckDB with `codec`, is all its log before 3. */
  async function checkpointedWith(codec: string): Promise<MemoryObjectStore> {
    const store = await tableWithCommits(3);
    const metadata = `{'id': 'table-id', 'format': {'provider': 'parquet', 'options': MAP {}}, 'schemaString': ${quoteLiteral(SCHEMA)}, 'partitionColumns': [], 'configuration': MAP {}, 'createdTime': 0}::${METADATA_TYPE}`;
    const addOf = (path: string) =>
      `{'path': '${path}', 'partitionValues': MAP {}, 'size': 10, 'modificationTime': 5, 'dataChange': false, 'stats': '{"numRecords":1}', 'stats_parsed': NULL}::${ADD_TYPE}`;
    const file = await scratch.write(new Uint8Array(0), ".parquet");
    await duck.run(
      `COPY (SELECT {'minReaderVersion': 1, 'minWriterVersion': 2}::${PROTOCOL_TYPE} AS protocol, NULL::${METADATA_TYPE} AS metaData, NULL::${ADD_TYPE} AS add
         UNION ALL SELECT NULL, ${metadata}, NULL
         UNION ALL SELECT NULL, NULL, ${addOf("f0")}
         UNION ALL SELECT NULL, NULL, ${addOf("f1")}) TO ${quoteLiteral(file)} (FORMAT parquet, COMPRESSION ${codec})`,
    );
    await store.put(checkpointKey(2), new Uint8Array(await readFile(file)));
    await store.deleteMany([commitKey(0), commitKey(1)]);
    return store;
  }

  it("reads SNAPPY, GZIP, BROTLI and uncompressed checkpoints, ZSTD where Node has it", async () => {
    const zstd = "zstdDecompressSync" in (await import("node:zlib"));
    for (const codec of ["snappy", "gzip", "brotli", "uncompressed", ...(zstd ? ["zstd"] : [])]) {
      const snapshot = await loadSnapshot(await checkpointedWith(codec));
      expect([...snapshot.files.keys()].sort(), codec).toEqual(["f0", "f1"]);
    }
  });

  it("refuses a codec it cannot decompress by name, not as a corrupt log", async () => {
    const store = await checkpointedWith("lz4_raw");
    await expect(loadSnapshot(store)).rejects.toThrow(UnsupportedFeatureError);
    await expect(loadSnapshot(store)).rejects.toThrow(
      /checkpoint compression LZ4_RAW.*_delta_log\/0+2\.checkpoint\.parquet/,
    );
  });
});
