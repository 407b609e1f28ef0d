import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Action } from "../../../shared/delta/log/actions.ts";
import { parseCommitFile } from "../../../shared/delta/log/commit-file.ts";
import { nextCommitTimestamp } from "../../../shared/delta/commit/commit-info.ts";
import { findConflict, standardRequirements } from "../../../shared/delta/commit/commit-requirements.ts";
import { commit } from "../../../shared/delta/commit/commit.ts";
import { DeltaTable } from "../../../shared/delta/delta-table.ts";
import { CommitConflictError, TableAlreadyExistsError } from "../../../shared/delta/errors.ts";
import { commitKey } from "../../../shared/delta/log/log-paths.ts";
import { DuckSession } from "../../../shared/duck/duck-session.ts";
import { MemoryObjectStore } from "../../../shared/object-store/memory-object-store.ts";
import { byId, field, ManualClock, schemaOf, steppingClock, T0 } from "./delta-test-kit.ts";

const schema = schemaOf(field("id", "long", false), field("value", "string"));

async function commitActions(store: MemoryObjectStore, version: number): Promise<Action[]> {
  return parseCommitFile(new TextDecoder().decode(await store.get(commitKey(version))), commitKey(version));
}

describe("commit", () => {
  let duck: DuckSession;
  beforeAll(async () => {
    duck = await DuckSession.open();
  });
  afterAll(() => duck.close());

  it("lands N concurrent appends, each exactly once, at versions 1..N", async () => {
    const store = new MemoryObjectStore();
    const clock = steppingClock();
    const creator = await DeltaTable.create(store, { schema }, { clock, duck });
    const writers = await Promise.all(
      Array.from({ length: 8 }, () => DeltaTable.open(store, { clock, duck })),
    );
    const results = await Promise.all(
      writers.map((writer, i) => writer.append({ rows: [{ id: i, value: `row ${i}` }] })),
    );
    expect(results.map((r) => (r.status === "committed" ? r.version : -1)).sort((a, b) => a - b)).toEqual([
      1, 2, 3, 4, 5, 6, 7, 8,
    ]);
    expect(byId(await creator.scan())).toEqual(
      Array.from({ length: 8 }, (_, i) => ({ id: i, value: `row ${i}` })),
    );
    for (let version = 1; version <= 8; version++) {
      const actions = await commitActions(store, version);
      expect(Object.keys(actions[0]!)).toEqual(["commitInfo"]);
      expect(actions.filter((a) => "add" in a)).toHaveLength(1);
    }
    const history = await creator.history();
    const timestamps = history.map((h) => h.timestamp).reverse();
    expect(timestamps).toEqual([...timestamps].sort((a, b) => a - b));
    expect(new Set(timestamps).size).toBe(timestamps.length);
    await Promise.all([creator, ...writers].map((t) => t.close()));
  });

  it("fails a DELETE whose file was removed by a concurrent commit, carrying the evidence", async () => {
    const store = new MemoryObjectStore();
    const clock = steppingClock();
    const table = await DeltaTable.create(
      store,
      { schema, rows: { rows: [{ id: 1, value: "a" }] } },
      { clock, duck },
    );
    const stale = table.snapshot;
    const [file] = [...stale.files.keys()];
    await table.delete(); // version 1 removes the file
    const result = await commit(
      store,
      {
        readSnapshot: stale,
        actions: [{ remove: { path: file!, deletionTimestamp: clock(), dataChange: true } }],
        operation: { operation: "DELETE", operationParameters: {}, isBlindAppend: false },
        requirements: standardRequirements({ readFiles: [file!], removedFiles: [file!] }),
      },
      { clock },
    );
    expect(result.status).toBe("conflict");
    const error = result.status === "conflict" ? result.error : undefined;
    expect(error).toBeInstanceOf(CommitConflictError);
    expect(error).toMatchObject({
      kind: "concurrent-delete-delete",
      readVersion: 0,
      winningVersion: 1,
      detail: { operation: "DELETE", paths: [file] },
    });
    expect(await store.head(commitKey(2))).toBeUndefined();
    await table.close();
  });

  it("rebases a blind append over a concurrent append, stamping after the winner", async () => {
    const store = new MemoryObjectStore();
    const clock = new ManualClock();
    const table = await DeltaTable.create(store, { schema }, { clock: clock.read, duck });
    const stale = table.snapshot;
    clock.advance(10_000);
    await table.append({ rows: [{ id: 1, value: "winner" }] }); // version 1 at T0 + 10 s
    clock.now = T0; // this writer's clock lags behind
    const committed = await commit(
      store,
      {
        readSnapshot: stale,
        actions: [],
        operation: { operation: "WRITE", operationParameters: { mode: "Append" }, isBlindAppend: true },
        requirements: standardRequirements({}),
      },
      { clock: clock.read },
    );
    expect(committed).toMatchObject({
      status: "committed",
      version: 2,
      rebasedOver: [1],
      timestamp: T0 + 10_001,
    });
    expect(committed.status === "committed" && committed.snapshot.files.size).toBe(1);
    await table.close();
  });

  it("reports a retried micro-batch racing itself as skipped, written once", async () => {
    const store = new MemoryObjectStore();
    const clock = steppingClock();
    const first = await DeltaTable.create(store, { schema }, { clock, duck });
    const second = await DeltaTable.open(store, { clock, duck });
    const txn = { appId: "pipe/flow", version: 1 };
    const results = await Promise.all([
      first.append({ rows: [{ id: 1, value: "batch 1" }] }, { txn }),
      second.append({ rows: [{ id: 1, value: "batch 1" }] }, { txn }),
    ]);
    expect(results.map((r) => r.status).sort()).toEqual(["committed", "txn-skipped"]);
    expect(await first.scan()).toHaveLength(1);
    await Promise.all([first.close(), second.close()]);
  });

  it("fails a write planned before a concurrent RESTORE", async () => {
    const store = new MemoryObjectStore();
    const clock = steppingClock();
    const table = await DeltaTable.create(
      store,
      { schema, rows: { rows: [{ id: 1, value: "a" }] } },
      { clock, duck },
    );
    await table.append({ rows: [{ id: 2, value: "b" }] });
    const stale = table.snapshot;
    await table.restore({ to: { version: 0 } });
    const result = await commit(
      store,
      {
        readSnapshot: stale,
        actions: [],
        operation: { operation: "WRITE", operationParameters: {}, isBlindAppend: true },
        requirements: standardRequirements({}),
      },
      { clock },
    );
    expect(result).toMatchObject({ status: "conflict" });
    expect(result.status === "conflict" && result.error).toMatchObject({
      name: "CommitConflictError",
      kind: "concurrent-restore",
      winningVersion: 2,
    });
    await table.close();
  });

  it("refuses to create a table twice", async () => {
    const store = new MemoryObjectStore();
    const first = await DeltaTable.create(store, { schema }, { duck });
    await expect(DeltaTable.create(store, { schema }, { duck })).rejects.toBeInstanceOf(
      TableAlreadyExistsError,
    );
    await first.close();
  });
});

describe("commit timestamps", () => {
  it("are max(now, previous + 1 ms, floor)", () => {
    expect(nextCommitTimestamp(100, undefined)).toBe(100);
    expect(nextCommitTimestamp(100, 200)).toBe(201);
    expect(nextCommitTimestamp(100, 50, 500)).toBe(500);
    expect(nextCommitTimestamp(1000, 50, 500)).toBe(1000);
  });
});

describe("conflict requirements", () => {
  const info = (operation: string): Action => ({ commitInfo: { operation } });
  it("flags a concurrent RESTORE, metadata or protocol change, and the same txn appId", () => {
    const requirements = standardRequirements({ txnAppId: "p/f" });
    expect(findConflict(requirements, 7, [info("RESTORE")])).toMatchObject({
      kind: "concurrent-restore",
      winningVersion: 7,
    });
    expect(
      findConflict(requirements, 7, [info("SET TBLPROPERTIES"), { metaData: {} as never }]),
    ).toMatchObject({ kind: "metadata-changed" });
    expect(
      findConflict(requirements, 7, [{ protocol: { minReaderVersion: 1, minWriterVersion: 4 } }]),
    ).toMatchObject({
      kind: "protocol-changed",
    });
    expect(
      findConflict(requirements, 7, [info("WRITE"), { txn: { appId: "p/f", version: 3 } }]),
    ).toMatchObject({
      kind: "concurrent-transaction",
      appId: "p/f",
    });
    expect(
      findConflict(requirements, 7, [info("WRITE"), { txn: { appId: "other", version: 3 } }]),
    ).toBeUndefined();
  });

  it("lets a blind append through, but not a removal of a file that was read", () => {
    const requirements = standardRequirements({ readFiles: ["a.parquet", "b c.parquet"] });
    const add: Action = {
      add: { path: "n.parquet", partitionValues: {}, size: 1, modificationTime: 0, dataChange: true },
    };
    expect(findConflict(requirements, 3, [info("WRITE"), add])).toBeUndefined();
    expect(
      findConflict(requirements, 3, [
        info("DELETE"),
        { remove: { path: "b%2520c.parquet", dataChange: true } },
      ]),
    ).toBeUndefined();
    expect(
      findConflict(requirements, 3, [
        info("DELETE"),
        { remove: { path: "b%20c.parquet", dataChange: true } },
      ]),
    ).toMatchObject({ kind: "concurrent-delete-read", paths: ["b c.parquet"] });
  });
});
