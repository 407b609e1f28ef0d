import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { Action } from "../../../shared/delta/log/actions.ts";
import { CorruptLogError } from "../../../shared/delta/errors.ts";
import { decodeLogPath } from "../../../shared/delta/log/data-file-paths.ts";
import {
  applyActions,
  emptyTableState,
  replayActions,
  snapshotTombstones,
  toSnapshot,
} from "../../../shared/delta/log/log-replay.ts";
import { add, metaData, protocol, remove } from "./table-fixture.ts";

describe("log replay (PROTOCOL.md Action Reconciliation)", () => {
  it("keeps the latest protocol and metaData", () => {
    const state = replayActions([
      protocol(),
      metaData({ name: "first" }),
      protocol({
        minReaderVersion: 3,
        minWriterVersion: 7,
        readerFeatures: [],
        writerFeatures: ["appendOnly"],
      }),
      metaData({ name: "second" }),
    ]);
    expect(state.protocol?.minWriterVersion).toBe(7);
    expect(state.metadata?.name).toBe("second");
  });

  it("reconciles add and remove by path: newest reference wins, re-adding clears the tombstone", () => {
    const state = replayActions([
      add("a", { size: 1 }),
      add("b"),
      remove("a"),
      add("c"),
      remove("c"),
      add("c", { size: 3 }),
      add("b", { size: 20, dataChange: false }),
    ]);
    expect([...state.files.keys()].sort()).toEqual(["b", "c"]);
    expect(state.files.get("b")?.size).toBe(20);
    expect(state.files.get("c")?.size).toBe(3);
    expect([...state.commitTombstones.keys()]).toEqual(["a"]);
  });

  it("keys files by the decoded path but keeps the wire path in the action", () => {
    const state = replayActions([add("test%25file%25prefix-1.parquet"), add("a%20b/c.parquet")]);
    expect([...state.files.keys()]).toEqual(["test%file%prefix-1.parquet", "a b/c.parquet"]);
    expect(state.files.get("test%file%prefix-1.parquet")?.path).toBe("test%25file%25prefix-1.parquet");
    const removed = applyActions(state, [remove("test%25file%25prefix-1.parquet")]);
    expect(removed.files.has("test%file%prefix-1.parquet")).toBe(false);
  });

  it("takes a path that is not valid percent-encoding as it is", () => {
    expect(decodeLogPath("100%.parquet")).toBe("100%.parquet");
  });

  it("keeps the latest txn per appId, even when its version goes down", () => {
    const state = replayActions([
      { txn: { appId: "a", version: 5 } },
      { txn: { appId: "b", version: 1 } },
      { txn: { appId: "a", version: 3, lastUpdated: 9 } },
    ]);
    expect(state.txns.get("a")).toEqual({ appId: "a", version: 3, lastUpdated: 9 });
    expect(state.txns.get("b")?.version).toBe(1);
  });

  it("drops removed domain metadata", () => {
    const state = replayActions([
      { domainMetadata: { domain: "d1", configuration: "{}", removed: false } },
      { domainMetadata: { domain: "d2", configuration: "{}", removed: false } },
      { domainMetadata: { domain: "d1", configuration: "{}", removed: true } },
    ]);
    expect([...state.domains.keys()]).toEqual(["d2"]);
  });

  it("freezes the state into a Snapshot with the commit's info", () => {
    const state = replayActions([protocol(), metaData(), add("a")]);
    const snapshot = toSnapshot(state, { version: 3, timestamp: 5, commitInfo: { timestamp: 5 } });
    expect(snapshot).toMatchObject({ version: 3, timestamp: 5, commitInfo: { timestamp: 5 } });
    applyActions(state, [remove("a")]);
    expect(snapshot.files.has("a")).toBe(true);
  });

  it("refuses a state without protocol or metaData", () => {
    expect(() => toSnapshot(replayActions([metaData()]), { version: 0, timestamp: 0 })).toThrow(
      CorruptLogError,
    );
    expect(() => toSnapshot(replayActions([protocol()]), { version: 0, timestamp: 0 })).toThrow(
      /no metaData/,
    );
  });

  it("leaves live exactly the paths whose last action is an add, the others as tombstones", () => {
    const fileAction = fc
      .tuple(fc.boolean(), fc.constantFrom("a", "b", "c", "d%20e"))
      .map(([isAdd, path]): Action => (isAdd ? add(path) : remove(path)));
    fc.assert(
      fc.property(fc.array(fc.array(fileAction, { maxLength: 5 }), { maxLength: 8 }), (commits) => {
        const stepwise = emptyTableState();
        for (const commit of commits) applyActions(stepwise, commit);
        const last = new Map<string, "add" | "remove">();
        for (const action of commits.flat()) {
          if ("add" in action) last.set(decodeLogPath(action.add.path), "add");
          if ("remove" in action) last.set(decodeLogPath(action.remove.path), "remove");
        }
        const expected = (kind: string) =>
          [...last]
            .filter(([, k]) => k === kind)
            .map(([p]) => p)
            .sort();
        expect([...stepwise.files.keys()].sort()).toEqual(expected("add"));
        expect([...stepwise.commitTombstones.keys()].sort()).toEqual(expected("remove"));
      }),
    );
  });

  it("gives a checkpointed snapshot the tombstones of the whole log, the checkpoint's read apart", async () => {
    const fileAction = fc
      .tuple(fc.boolean(), fc.constantFrom("a", "b", "c", "d%20e"))
      .map(([isAdd, path]): Action => (isAdd ? add(path) : remove(path)));
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.array(fileAction, { maxLength: 5 }), { maxLength: 8 }),
        fc.nat(),
        async (commits, at) => {
          const header = [protocol(), metaData()];
          const whole = replayActions([...header, ...commits.flat()]);
          // The checkpoint after `cut` commits: its live files as adds, its tombstones read apart (as the loader does).
          const cut = at % (commits.length + 1);
          const checkpoint = replayActions([...header, ...commits.slice(0, cut).flat()]);
          const loaded = replayActions([
            ...header,
            ...[...checkpoint.files.values()].map((file) => ({ add: file })),
          ]);
          loaded.checkpointTombstones = async () => checkpoint.commitTombstones;
          for (const commit of commits.slice(cut)) applyActions(loaded, commit);
          const snapshot = toSnapshot(loaded, { version: commits.length, timestamp: 0 });
          expect([...snapshot.files.keys()].sort()).toEqual([...whole.files.keys()].sort());
          expect(new Map(await snapshotTombstones(snapshot))).toEqual(whole.commitTombstones);
        },
      ),
    );
  });
});
