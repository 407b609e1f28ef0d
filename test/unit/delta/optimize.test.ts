import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DeltaTable } from "../../../shared/delta/delta-table.ts";
import { CommitConflictError } from "../../../shared/delta/errors.ts";
import { parseCommitFile } from "../../../shared/delta/log/commit-file.ts";
import { commitKey } from "../../../shared/delta/log/log-paths.ts";
import { compact } from "../../../shared/delta/commit/transaction.ts";
import type { AddFile } from "../../../shared/delta/log/actions.ts";
import { planOptimize } from "../../../shared/delta/operations/optimize.ts";
import { binDigest } from "../../../shared/delta/operations/compaction-reuse.ts";
import type { Snapshot } from "../../../shared/delta/read/snapshot.ts";
import { DuckSession } from "../../../shared/duck/duck-session.ts";
import { MemoryObjectStore } from "../../../shared/object-store/memory-object-store.ts";
import { byId, field, ManualClock, schemaOf } from "./delta-test-kit.ts";

const schema = schemaOf(field("id", "long", false), field("value", "string"), field("part", "string"));
const HOUR = 3_600_000;

async function actionsOf(store: MemoryObjectStore, version: number) {
  return parseCommitFile(new TextDecoder().decode(await store.get(commitKey(version))), commitKey(version));
}

function addedPaths(actions: Awaited<ReturnType<typeof actionsOf>>): string[] {
  return actions.flatMap((a) => ("add" in a ? [a.add.path] : [])).sort();
}

describe("OPTIMIZE", () => {
  let duck: DuckSession;
  beforeAll(async () => {
    duck = await DuckSession.open();
  });
  afterAll(() => duck.close());

  async function tableOf(
    batches: readonly (readonly { id: number; value: string | null; part: string }[])[],
    options: { partitioned?: boolean; properties?: Record<string, string> } = {},
  ) {
    const clock = new ManualClock();
    const store = new MemoryObjectStore(clock.read);
    const table = await DeltaTable.create(
      store,
      {
        schema,
        ...(options.partitioned ? { partitionColumns: ["part"] } : {}),
        properties: { "delta.enableChangeDataFeed": "true", ...options.properties },
      },
      { clock: clock.read, duck },
    );
    for (const rows of batches) {
      clock.advance(1000);
      await table.append({ rows });
    }
    return { clock, store, table };
  }

  it("keeps the rows identical, in fewer files, for any batches (property)", async () => {
    const row = fc.record({
      id: fc.integer({ min: 0, max: 1_000_000 }),
      value: fc.option(fc.string({ maxLength: 6 }), { nil: null }),
      part: fc.constantFrom("a", "b", "c"),
    });
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.array(row, { minLength: 1, maxLength: 5 }), { minLength: 0, maxLength: 7 }),
        fc.boolean(),
        async (batches, partitioned) => {
          const { table } = await tableOf(batches, { partitioned });
          try {
            const before = byId(await table.scan());
            const filesBefore = table.snapshot.files.size;
            const versionBefore = table.snapshot.version;
            const result = await table.optimize();
            expect(byId(await table.scan())).toEqual(before);
            const partitions = new Set(batches.flat().map((r) => (partitioned ? r.part : "")));
            expect(table.snapshot.files.size).toBeLessThanOrEqual(
              Math.max(filesBefore === 0 ? 0 : 1, partitions.size),
            );
            if (result.committed) {
              // Nothing changed for the change feed, and the version before still reads its own files.
              expect(await table.changes(result.committed.version)).toEqual([]);
              expect(byId(await table.scan({ version: versionBefore }))).toEqual(before);
            } else {
              expect(table.snapshot.version).toBe(versionBefore);
            }
          } finally {
            await table.close();
          }
        },
      ),
      { numRuns: 15 },
    );
  });

  it("writes a dataChange: false commit as Delta does, and nothing when there is nothing to compact", async () => {
    const { store, table } = await tableOf([
      [{ id: 1, value: "x", part: "a" }],
      [{ id: 2, value: "y", part: "a" }],
      [{ id: 3, value: "z", part: "a" }],
    ]);
    const result = await table.optimize();
    const actions = await actionsOf(store, result.committed!.version);
    const info = actions.find((a) => "commitInfo" in a);
    expect(info && "commitInfo" in info ? info.commitInfo : undefined).toMatchObject({
      operation: "OPTIMIZE",
      operationParameters: { predicate: "[]", zOrderBy: "[]" },
      operationMetrics: { numRemovedFiles: "3", numAddedFiles: "1", numOutputRows: "3" },
      isBlindAppend: false,
    });
    const files = actions.flatMap((a): { dataChange: boolean }[] =>
      "add" in a ? [a.add] : "remove" in a ? [a.remove] : [],
    );
    expect(files).toHaveLength(4);
    expect(files.every((f) => f.dataChange === false)).toBe(true);
    expect(actions.some((a) => "cdc" in a)).toBe(false);
    const again = await table.optimize();
    expect(again.committed).toBeUndefined();
    expect(again.plan.bins).toEqual([]);
    await table.close();
  });

  it("leaves files at the target size alone and packs bins up to it", async () => {
    const { table } = await tableOf([
      [{ id: 1, value: "x", part: "a" }],
      [{ id: 2, value: "y", part: "a" }],
      [{ id: 3, value: "z", part: "a" }],
    ]);
    const sizes = [...table.snapshot.files.values()].map((f) => f.size);
    const plan = planOptimize(table.snapshot, { targetFileSizeBytes: Math.max(...sizes) * 2 });
    expect(plan.bins.map((bin) => bin.files.length)).toEqual([2]);
    expect(plan.filesSkipped).toBe(1);
    expect(planOptimize(table.snapshot, { targetFileSizeBytes: Math.min(...sizes) }).bins).toEqual([]);
    await table.close();
  });

  it("auto-compaction's size tiers bound the rewriting of a growing table (property, against a model)", () => {
    // The model: appends of random sizes; each planned bin becomes one file of the bins' total size.
    // Without tiers a compacted file joins every later bin, and the bytes rewritten grow with the
    // square of the table's age; with them each byte climbs at most one tier per rewrite.
    const target = 10_000_000;
    fc.assert(
      fc.property(
        fc.integer({ min: 2, max: 12 }),
        fc.array(fc.integer({ min: 100, max: 100_000 }), { minLength: 1, maxLength: 600, size: "max" }),
        (minFiles, appends) => {
          const files = new Map<string, AddFile>();
          let bound = 0; // each appended byte climbs at most one tier per rewrite, up to the target
          let rewritten = 0;
          let next = 0;
          const add = (size: number) => {
            const path = `f${next++}`;
            files.set(path, { path, size, partitionValues: {}, modificationTime: next, dataChange: true });
          };
          for (const size of appends) {
            add(size);
            bound += size * Math.ceil(Math.log(target / size) / Math.log(minFiles) + 1);
            const snapshot = {
              version: next,
              metadata: { partitionColumns: [] },
              files,
            } as unknown as Snapshot;
            const plan = planOptimize(snapshot, {
              targetFileSizeBytes: target,
              minFilesPerPartition: minFiles,
              sizeTiers: true,
            });
            for (const bin of plan.bins) {
              const total = bin.files.reduce((sum, file) => sum + file.size, 0);
              for (const file of bin.files) files.delete(file.path);
              rewritten += total;
              add(total);
            }
          }
          expect(rewritten).toBeLessThanOrEqual(bound);
          const tiers = Math.ceil(Math.log(target) / Math.log(minFiles)) + 1;
          // And the table stays compact: fewer than minFiles files per tier, plus those at the target.
          const small = [...files.values()].filter((file) => file.size < target / minFiles).length;
          expect(small).toBeLessThan(minFiles * tiers);
        },
      ),
      // Most runs append hundreds of files (size "max"), and without the tiers each breaks the bound.
      { numRuns: 50 },
    );
  });

  it("conflicts with a concurrent DELETE of a file it compacts, and rebases over a concurrent append", async () => {
    const { clock, store, table } = await tableOf([
      [{ id: 1, value: "x", part: "a" }],
      [{ id: 2, value: "y", part: "a" }],
    ]);
    const other = await DeltaTable.open(store, { clock: clock.read, duck });
    const read = table.snapshot;
    const plan = planOptimize(read, { targetFileSizeBytes: 1 << 20 });

    await other.delete("id = 1");
    const lost = await compact(store, read, plan, { clock: clock.read });
    expect(lost.status).toBe("conflict");
    expect(lost.status === "conflict" && lost.error).toBeInstanceOf(CommitConflictError);
    expect(lost.status === "conflict" && lost.error.kind).toBe("concurrent-delete-delete");
    expect(byId(await other.scan())).toEqual([{ id: 2, value: "y", part: "a" }]);

    const fresh = await table.refresh();
    await other.append({ rows: [{ id: 9, value: "w", part: "b" }] });
    await other.append({ rows: [{ id: 10, value: "v", part: "b" }] });
    const won = await compact(store, fresh, planOptimize(fresh, { targetFileSizeBytes: 1 << 20 }), {
      clock: clock.read,
    });
    expect(won.status).toBe("committed");
    expect(won.status === "committed" && won.rebasedOver.length).toBe(2);
    expect(byId(await table.scan()).map((r) => r.id)).toEqual([2, 9, 10]);
    await other.close();
    await table.close();
  });

  it("auto-compacts after writes once a partition holds enough small files", async () => {
    const { table } = await tableOf([], {
      partitioned: true,
      properties: { "delta.autoOptimize.autoCompact": "true", "ebb.autoCompact.minNumFiles": "4" },
    });
    const versions: (number | undefined)[] = [];
    for (let i = 1; i <= 11; i++) {
      const result = await table.append({ rows: [{ id: i, value: `v${i}`, part: i % 3 === 0 ? "b" : "a" }] });
      versions.push(result.status === "committed" ? result.autoCompactedVersion : undefined);
    }
    // A write's own files wait for the next compaction: partition a holds 4 small files before write 6
    // (1, 2, 4, 5) and again before write 11 (the compacted one, of their size tier, and 7, 8, 10); b
    // never has 4.
    const compactedAfter = versions.flatMap((v, i) => (v === undefined ? [] : [i + 1]));
    expect(compactedAfter).toEqual([6, 11]);
    const history = await table.history();
    expect(history.filter((h) => h.operation === "OPTIMIZE")).toHaveLength(2);
    expect(byId(await table.scan()).map((r) => r.id)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]);
    expect(table.snapshot.files.size).toBe(5); // a: 1 compacted + 1 new; b: 3 small
    await table.close();
  });

  it("a replay after a RESTORE keeps the compacted files the RESTORE removed instead of writing them again", async () => {
    const { clock, store, table } = await tableOf([], {
      properties: { "delta.autoOptimize.autoCompact": "true", "ebb.autoCompact.minNumFiles": "3" },
    });
    for (let i = 1; i <= 3; i++) await table.append({ rows: [{ id: i, value: `v${i}`, part: "a" }] });
    const point = table.snapshot.version;
    const original = await table.append({ rows: [{ id: 4, value: "v4", part: "a" }] });
    expect(original.status === "committed" && original.autoCompactedVersion).toBe(point + 2);
    const compacted = addedPaths(await actionsOf(store, point + 2));
    expect(compacted).toHaveLength(1);

    clock.advance(HOUR);
    await table.restore({ to: { version: point } });
    const replay = await table.append({ rows: [{ id: 40, value: "v40", part: "a" }] });
    expect(replay.status === "committed" && replay.autoCompactedVersion).toBe(point + 5);
    const actions = await actionsOf(store, point + 5);
    // The same three files are compacted again, into the file the abandoned compaction wrote.
    expect(addedPaths(actions)).toEqual(compacted);
    expect(actions.flatMap((a) => ("remove" in a ? [a.remove.path] : [])).sort()).toEqual(
      (await actionsOf(store, point + 2)).flatMap((a) => ("remove" in a ? [a.remove.path] : [])).sort(),
    );
    expect(byId(await table.scan()).map((r) => r.id)).toEqual([1, 2, 3, 40]);
    await table.close();
  });

  it("writes the compaction again when the file it would keep is gone or the table's schema changed", async () => {
    const { store, table } = await tableOf([], {
      properties: { "delta.autoOptimize.autoCompact": "true", "ebb.autoCompact.minNumFiles": "3" },
    });
    for (let i = 1; i <= 3; i++) await table.append({ rows: [{ id: i, value: `v${i}`, part: "a" }] });
    const point = table.snapshot.version;
    await table.append({ rows: [{ id: 4, value: "v4", part: "a" }] });
    const [compacted] = addedPaths(await actionsOf(store, point + 2));

    await table.restore({ to: { version: point } });
    await store.delete(compacted!); // as VACUUM would once the tombstone expired
    const replay = await table.append({ rows: [{ id: 40, value: "v40", part: "a" }] });
    await table.append({ rows: [{ id: 41, value: "v41", part: "a" }] });
    const rewritten = addedPaths(
      await actionsOf(store, (replay.status === "committed" && replay.autoCompactedVersion) || -1),
    );
    expect(rewritten).toHaveLength(1);
    expect(rewritten[0]).not.toBe(compacted);
    expect(byId(await table.scan()).map((r) => r.id)).toEqual([1, 2, 3, 40, 41]);

    // What a bin holds depends on the table's schema and properties too: another digest when they change.
    const bin = planOptimize(table.snapshot, { targetFileSizeBytes: 1 << 20 }).bins[0]!;
    const changed = {
      ...table.snapshot,
      metadata: { ...table.snapshot.metadata, configuration: { "delta.dataSkippingNumIndexedCols": "1" } },
    };
    expect(binDigest(changed, bin, 1 << 20)).not.toBe(binDigest(table.snapshot, bin, 1 << 20));
    expect(binDigest(table.snapshot, bin, 1 << 19)).not.toBe(binDigest(table.snapshot, bin, 1 << 20));
    await table.close();
  });

  it("is rewind-safe: RESTORE to before a compaction brings that version's files back, which VACUUM keeps for a protected version", async () => {
    const { clock, store, table } = await tableOf([
      [{ id: 1, value: "x", part: "a" }],
      [{ id: 2, value: "y", part: "a" }],
    ]);
    const point = table.snapshot.version;
    const pointFiles = [...table.snapshot.files.keys()].sort();
    await table.optimize();
    await table.append({ rows: [{ id: 3, value: "z", part: "a" }] });
    clock.advance(200 * HOUR);
    const vacuum = await table.vacuum({ protectedVersions: [point] });
    expect(vacuum.filesToDelete).toEqual([]);
    for (const key of pointFiles) expect(await store.head(key)).toBeDefined();
    await table.restore({ to: { version: point } });
    expect([...table.snapshot.files.keys()].sort()).toEqual(pointFiles);
    expect(byId(await table.scan()).map((r) => r.id)).toEqual([1, 2]);
    await table.close();
  });
});
