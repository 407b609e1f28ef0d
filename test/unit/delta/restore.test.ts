import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AddFile, Metadata } from "../../../shared/delta/log/actions.ts";
import { DeltaTable } from "../../../shared/delta/delta-table.ts";
import { RestoreFilesMissingError } from "../../../shared/delta/errors.ts";
import { commitKey } from "../../../shared/delta/log/log-paths.ts";
import { planRestore, restoreActions } from "../../../shared/delta/operations/restore.ts";
import type { Snapshot } from "../../../shared/delta/read/snapshot.ts";
import { DuckSession } from "../../../shared/duck/duck-session.ts";
import { MemoryObjectStore } from "../../../shared/object-store/memory-object-store.ts";
import { byId, countingStore, field, ManualClock, schemaOf, T0 } from "./delta-test-kit.ts";

const schema = schemaOf(field("id", "long", false), field("value", "string"));

const file = (path: string, size: number): AddFile => ({
  path,
  partitionValues: {},
  size,
  modificationTime: T0,
  dataChange: true,
});

function snapshot(
  version: number,
  files: AddFile[],
  txns: Record<string, number>,
  metadata?: Partial<Metadata>,
): Snapshot {
  return {
    version,
    protocol: { minReaderVersion: 1, minWriterVersion: 2 },
    metadata: {
      id: "table-id",
      format: { provider: "parquet", options: {} },
      schemaString: JSON.stringify(schema),
      partitionColumns: [],
      configuration: {},
      ...metadata,
    },
    files: new Map(files.map((f) => [f.path, f])),
    commitTombstones: new Map(),
    txns: new Map(Object.entries(txns).map(([appId, v]) => [appId, { appId, version: v }])),
    timestamp: T0 + version,
  };
}

describe("planRestore (pure)", () => {
  const target = snapshot(3, [file("a", 10), file("b", 20)], { "p/f1": 4 });
  const current = snapshot(9, [file("b", 20), file("c", 40), file("d", 80)], { "p/f1": 7, "p/f2": 2 });

  it("re-adds the target's missing files, removes the extra ones, and reports Delta's metrics", () => {
    const plan = planRestore(current, target, T0 + 100);
    expect(plan.filesToRestore.map((f) => f.path)).toEqual(["a"]);
    expect(plan.filesToRemove.map((f) => f.path).sort()).toEqual(["c", "d"]);
    expect(plan.metrics).toEqual({
      numRestoredFiles: 1,
      numRemovedFiles: 2,
      restoredFilesSize: 10,
      removedFilesSize: 120,
      numOfFilesAfterRestore: 2,
      tableSizeAfterRestore: 30,
    });
    expect(plan.metadata).toBeUndefined();
    expect(plan.protocol).toBeUndefined();
  });

  it("moves every txn appId back to its target version, and to -1 where the target had none", () => {
    const plan = planRestore(current, target, T0 + 100);
    expect(plan.txns).toEqual([
      { appId: "p/f1", version: 4, lastUpdated: T0 + 100 },
      { appId: "p/f2", version: -1, lastUpdated: T0 + 100 },
    ]);
  });

  it("restores the target's schema but keeps the table id, and never downgrades the protocol", () => {
    const older = snapshot(1, [], {}, { id: "table-id", schemaString: '{"type":"struct","fields":[]}' });
    const upgraded: Snapshot = { ...current, protocol: { minReaderVersion: 1, minWriterVersion: 4 } };
    const plan = planRestore(upgraded, older, T0);
    expect(plan.metadata?.schemaString).toBe('{"type":"struct","fields":[]}');
    expect(plan.protocol).toBeUndefined();
    const actions = restoreActions(plan, T0);
    expect(actions.filter((a) => "remove" in a)).toHaveLength(3);
    expect(actions.find((a) => "metaData" in a)).toBeDefined();
  });
});

describe("RESTORE", () => {
  let duck: DuckSession;
  beforeAll(async () => {
    duck = await DuckSession.open();
  });
  afterAll(() => duck.close());

  it("is metadata-only: no data file is read", async () => {
    const clock = new ManualClock();
    const counting = countingStore(new MemoryObjectStore(clock.read));
    const table = await DeltaTable.create(
      counting.store,
      { schema, rows: { rows: [{ id: 1, value: "v0" }] } },
      { clock: clock.read, duck },
    );
    await table.overwrite({ rows: [{ id: 2, value: "v1" }] });
    counting.gets.length = 0;
    const result = await table.restore({ to: { version: 0 } });
    expect(result).toMatchObject({ status: "committed", version: 2 });
    expect(counting.gets.filter((key) => key.endsWith(".parquet"))).toEqual([]);
    expect(byId(await table.scan())).toEqual([{ id: 1, value: "v0" }]);
    await table.close();
  });

  it("sets txn appIds back, so a replayed micro-batch is written again", async () => {
    const clock = new ManualClock();
    const table = await DeltaTable.create(
      new MemoryObjectStore(clock.read),
      { schema },
      { clock: clock.read, duck },
    );
    const app = "pipeline/flow";
    await table.append({ rows: [{ id: 1, value: "seq 1" }] }, { txn: { appId: app, version: 1 } });
    await table.append({ rows: [{ id: 2, value: "seq 2" }] }, { txn: { appId: app, version: 2 } });
    expect(
      await table.append({ rows: [{ id: 2, value: "again" }] }, { txn: { appId: app, version: 2 } }),
    ).toMatchObject({
      status: "txn-skipped",
      tableVersion: 2,
    });
    await table.restore({ to: { version: 1 } });
    expect(table.snapshot.txns.get(app)?.version).toBe(1);
    const replay = await table.append(
      { rows: [{ id: 2, value: "seq 2 replayed" }] },
      { txn: { appId: app, version: 2 } },
    );
    expect(replay).toMatchObject({ status: "committed" });
    expect(byId(await table.scan())).toEqual([
      { id: 1, value: "seq 1" },
      { id: 2, value: "seq 2 replayed" },
    ]);
    await table.restore({ to: { version: 0 } });
    expect(table.snapshot.txns.get(app)?.version).toBe(-1);
    await table.close();
  });

  it("fails before writing anything when the target's files were vacuumed, naming them", async () => {
    const clock = new ManualClock();
    const store = new MemoryObjectStore(clock.read);
    const table = await DeltaTable.create(
      store,
      { schema, rows: { rows: [{ id: 1, value: "old" }] } },
      { clock: clock.read, duck },
    );
    const oldFiles = [...table.snapshot.files.keys()];
    await table.overwrite({ rows: [{ id: 2, value: "new" }] });
    clock.advance(8 * 24 * 3_600_000);
    const vacuum = await table.vacuum();
    expect(vacuum.filesToDelete.map((f) => f.key)).toEqual(oldFiles);
    const error = await table.restore({ to: { version: 0 } }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RestoreFilesMissingError);
    expect((error as RestoreFilesMissingError).missingFiles).toEqual(oldFiles);
    expect(await store.head(commitKey(2))).toBeUndefined();
    await table.close();
  });

  it("restores by timestamp to the latest commit at or before it, recording the request", async () => {
    const clock = new ManualClock();
    const table = await DeltaTable.create(
      new MemoryObjectStore(clock.read),
      { schema, rows: { rows: [{ id: 1, value: "a" }] } },
      { clock: clock.read, duck },
    );
    clock.advance(60_000);
    await table.append({ rows: [{ id: 2, value: "b" }] });
    clock.advance(60_000);
    await table.append({ rows: [{ id: 3, value: "c" }] });
    await table.restore({ to: { timestamp: T0 + 90_000 } });
    expect(byId(await table.scan())).toEqual([
      { id: 1, value: "a" },
      { id: 2, value: "b" },
    ]);
    const [entry] = await table.history({ limit: 1 });
    expect(entry?.operationParameters).toEqual({
      version: 1,
      timestamp: new Date(T0 + 90_000).toISOString(),
    });
    await table.close();
  });
});
