import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { Action, AddFile, RemoveFile } from "../../../shared/delta/log/actions.ts";
import { writeCheckpoint } from "../../../shared/delta/log/checkpoint-writer.ts";
import { commitKey } from "../../../shared/delta/log/log-paths.ts";
import { replayActions, snapshotTombstones, toSnapshot } from "../../../shared/delta/log/log-replay.ts";
import { forgetDecodedCheckpoints } from "../../../shared/delta/read/checkpoint-cache.ts";
import { loadSnapshot } from "../../../shared/delta/read/snapshot-loader.ts";
import type { Snapshot } from "../../../shared/delta/read/snapshot.ts";
import type { DuckSession } from "../../../shared/duck/duck-session.ts";
import type { ScratchFolder } from "../../../shared/duck/scratch-folder.ts";
import { MemoryObjectStore } from "../../../shared/object-store/memory-object-store.ts";
import { commitInfo, metaData, protocol, writeCommit } from "./table-fixture.ts";
import { openDuckAndScratch } from "../../support/duck-and-scratch.ts";

/**
 * Checkpoints are decoded in process (hyparquet), apart from the DuckDB that writes them: whatever a
 * snapshot holds — partition values null or not, stats with bounds past 2^53, tags, transactions,
 * configuration, tombstones — its checkpoint alone loads it back field for field.
 */

let duck: DuckSession;
let scratch: ScratchFolder;
openDuckAndScratch((opened) => ({ duck, scratch } = opened));

const NOW = 1_700_000_000_000;
const text = fc.string({ unit: "grapheme", maxLength: 8 });
const partitionValues = fc.dictionary(fc.constantFrom("p", "q", "r é"), fc.option(text, { nil: null }), {
  maxKeys: 3,
});
const bound = fc.oneof(fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }), fc.integer(), text);
const stats = fc.option(
  fc.record({
    numRecords: fc.nat(),
    minValues: fc.record({ id: bound }),
    maxValues: fc.record({ id: bound }),
  }),
  { nil: undefined },
);
const addFile = fc.record({
  path: fc.stringMatching(/^[a-z0-9=%/ -]{1,16}$/),
  partitionValues,
  size: fc.nat({ max: 2 ** 40 }),
  modificationTime: fc.nat({ max: 2 ** 45 }),
  stats,
  tags: fc.option(fc.dictionary(fc.constantFrom("ZCUBE", "t"), text, { minKeys: 1, maxKeys: 2 }), {
    nil: undefined,
  }),
});
const removeFile = fc.record({
  path: fc.stringMatching(/^r[a-z0-9]{1,8}$/),
  deletionTimestamp: fc.integer({ min: NOW - 1_000_000, max: NOW }),
  partitionValues: fc.option(partitionValues, { nil: undefined }),
  size: fc.option(fc.nat({ max: 2 ** 40 }), { nil: undefined }),
  extendedFileMetadata: fc.option(fc.boolean(), { nil: undefined }),
});

/** `stats` as a writer encodes it, bigint bounds digit for digit. */
function statsText(value: { numRecords: number; minValues: { id: unknown }; maxValues: { id: unknown } }) {
  return JSON.stringify(value, (_key, v: unknown) => (typeof v === "bigint" ? `#${v}#` : v)).replace(
    /"#(-?\d+)#"/g,
    "$1",
  );
}

function comparable(snapshot: Snapshot, tombstones: ReadonlyMap<string, RemoveFile>) {
  return {
    protocol: snapshot.protocol,
    metadata: snapshot.metadata,
    files: [...snapshot.files.values()].map((file) => ({ ...file, dataChange: false })).sort(byPath),
    tombstones: [...tombstones.values()].map((file) => ({ ...file, dataChange: false })).sort(byPath),
    txns: [...snapshot.txns.values()],
  };
}
const byPath = (a: { path: string }, b: { path: string }) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0);

describe("a checkpoint decoded in process", () => {
  it("loads the snapshot it was written from, every field of every action", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.uniqueArray(addFile, { selector: (file) => file.path, maxLength: 12 }),
        fc.uniqueArray(removeFile, { selector: (file) => file.path, maxLength: 4 }),
        fc.uniqueArray(fc.record({ appId: text, version: fc.nat(), lastUpdated: fc.nat({ max: 2 ** 45 }) }), {
          selector: (txn) => txn.appId,
          maxLength: 3,
        }),
        fc.dictionary(fc.constantFrom("user.owner", "x.y", "k é"), text, { maxKeys: 3 }),
        async (adds, removes, txns, configuration) => {
          const actions: Action[] = [
            commitInfo(NOW),
            protocol(),
            metaData({ configuration, partitionColumns: [] }),
            ...txns.map((txn) => ({ txn })),
            ...adds.map(({ stats: fileStats, tags, ...file }): Action => ({
              add: {
                ...file,
                dataChange: true,
                ...(fileStats ? { stats: statsText(fileStats) } : {}),
                ...(tags ? { tags } : {}),
              } as AddFile,
            })),
            ...removes
              .filter((file) => !adds.some((a) => a.path === file.path))
              .map((file): Action => ({ remove: { ...file, dataChange: true } as RemoveFile })),
          ];
          const written = toSnapshot(replayActions(actions), { version: 0, timestamp: NOW });
          const store = new MemoryObjectStore(() => NOW);
          await writeCommit(store, 0, actions);
          await writeCommit(store, 1, [commitInfo(NOW + 1)]);
          await writeCheckpoint(store, duck, scratch, { ...written, version: 1 }, NOW);
          // The checkpoint alone: commit 0 gone, nothing else to read the actions from.
          await store.deleteMany([commitKey(0)]);
          forgetDecodedCheckpoints();
          const loaded = await loadSnapshot(store, { version: 1 });
          expect(comparable(loaded, await snapshotTombstones(loaded))).toEqual(
            comparable(written, await snapshotTombstones(written)),
          );
        },
      ),
      { numRuns: 40 },
    );
  });
});
