import { existsSync, readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import fc from "fast-check";
import { parquetReadObjects } from "hyparquet";
import { describe, expect, it } from "vitest";
import type { Action, AddFile, RemoveFile } from "../../../shared/delta/log/actions.ts";
import {
  readCheckpoint,
  readCheckpointTombstones,
  type CheckpointParts,
} from "../../../shared/delta/log/checkpoint-reader.ts";
import { writeCheckpoint } from "../../../shared/delta/log/checkpoint-writer.ts";
import { decodeLogPath } from "../../../shared/delta/log/data-file-paths.ts";
import { checkpointKey } from "../../../shared/delta/log/log-paths.ts";
import { replayActions, toSnapshot } from "../../../shared/delta/log/log-replay.ts";
import { CHECKPOINT_COMPRESSORS } from "../../../shared/delta/log/parquet-codecs.ts";
import type { DuckSession } from "../../../shared/duck/duck-session.ts";
import type { ScratchFolder } from "../../../shared/duck/scratch-folder.ts";
import { MemoryObjectStore } from "../../../shared/object-store/memory-object-store.ts";
import { CORPUS } from "../../conformance/delta-corpus.ts";
import { openDuckAndScratch } from "../../support/duck-and-scratch.ts";
import { commitInfo, metaData, protocol } from "./table-fixture.ts";

/**
 * The checkpoint reader reads each action's rows off its leaves' levels and decodes only the
 * leaves a snapshot needs (parquet-leaves.ts). Whatever a checkpoint holds, that gives exactly the
 * actions of the reference: every row read whole by hyparquet's row reader, each non-null action
 * column taken as the action in the shape of a commit line.
 */

let duck: DuckSession;
let scratch: ScratchFolder;
openDuckAndScratch((opened) => ({ duck, scratch } = opened));

const KINDS = ["protocol", "metaData", "txn", "domainMetadata", "add"] as const;
const STRUCT_FORMS = new Set(["stats_parsed", "partitionValues_parsed"]);

/** A column value as a commit line has it: no null fields, 64-bit integers as numbers. */
function lineValue(value: unknown, top: boolean, kind: string): unknown {
  if (typeof value === "bigint") return Number(value);
  if (value === null || typeof value !== "object") return value;
  if (Array.isArray(value))
    return value.map((item) => (item === undefined ? null : lineValue(item, false, kind)));
  const out: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) {
    if (top && (item == null || ((kind === "add" || kind === "remove") && STRUCT_FORMS.has(key)))) continue;
    if (item !== undefined) out[key] = lineValue(item, false, kind);
  }
  return out;
}

/** The reference: the checkpoint read row by row, every action column of every row. */
async function reference(bytes: Uint8Array): Promise<{ actions: Action[]; removes: unknown[] }> {
  const file = bytes.slice().buffer;
  const rows = (await parquetReadObjects({ file, compressors: CHECKPOINT_COMPRESSORS })) as Record<
    string,
    unknown
  >[];
  const actions: Action[] = [];
  for (const kind of KINDS) {
    for (const row of rows) {
      if (row[kind] == null) continue;
      const body = lineValue(row[kind], true, kind) as Record<string, unknown>;
      if (kind === "add") body.partitionValues ??= {};
      if (kind === "metaData") {
        const format = (body.format ?? { provider: "parquet" }) as Record<string, unknown>;
        body.format = { ...format, options: format.options ?? {} };
        body.configuration ??= {};
        body.partitionColumns ??= [];
      }
      actions.push({ [kind]: body } as unknown as Action);
    }
  }
  const removes = rows
    .filter((row) => row.remove != null)
    .map((row) => lineValue(row.remove, true, "remove"));
  return { actions, removes };
}

function decoded(bytes: Uint8Array): { actions: Action[]; removes: unknown[] } {
  const parts: CheckpointParts = {
    checkpoint: { version: 1, keys: ["checkpoint.parquet"], lastModified: 0, identity: "" },
    bytes: [bytes],
  };
  const { actions, files } = readCheckpoint(parts);
  const adds = files.actions();
  // The paths decoded at once are those of the adds built later, one an add, in order.
  expect(files.keys).toEqual(adds.map((add) => decodeLogPath(add.path)));
  return {
    actions: [...actions, ...adds.map((add): Action => ({ add }))],
    removes: readCheckpointTombstones(parts),
  };
}

const NOW = 1_700_000_000_000;
const text = fc.string({ unit: "grapheme", maxLength: 8 });
const partitionValues = fc.dictionary(fc.constantFrom("p", "q", "r é"), fc.option(text, { nil: null }), {
  maxKeys: 3,
});
const addFile = fc.record({
  path: fc.stringMatching(/^[a-z0-9=%/ -]{1,16}$/),
  partitionValues,
  size: fc.nat({ max: 2 ** 40 }),
  modificationTime: fc.nat({ max: 2 ** 45 }),
  stats: fc.option(fc.json(), { nil: undefined }),
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

describe("a checkpoint read leaf by leaf", () => {
  it("gives the actions and tombstones of the whole rows, for any checkpoint Ebb writes", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.uniqueArray(addFile, { selector: (file) => file.path, maxLength: 40 }),
        fc.uniqueArray(removeFile, { selector: (file) => file.path, maxLength: 6 }),
        fc.uniqueArray(fc.record({ appId: text, version: fc.nat(), lastUpdated: fc.nat({ max: 2 ** 45 }) }), {
          selector: (txn) => txn.appId,
          maxLength: 3,
        }),
        fc.dictionary(fc.constantFrom("user.owner", "x.y", "k é"), text, { maxKeys: 3 }),
        fc.boolean(),
        async (adds, removes, txns, configuration, statsAsJson) => {
          const actions: Action[] = [
            commitInfo(NOW),
            protocol(),
            metaData({
              configuration: {
                ...configuration,
                ...(statsAsJson ? {} : { "delta.checkpoint.writeStatsAsJson": "false" }),
              },
              partitionColumns: [],
            }),
            ...txns.map((txn) => ({ txn })),
            ...adds.map(({ tags, ...file }): Action => ({
              add: { ...file, dataChange: true, ...(tags ? { tags } : {}) } as AddFile,
            })),
            ...removes
              .filter((file) => !adds.some((a) => a.path === file.path))
              .map((file): Action => ({ remove: { ...file, dataChange: true } as RemoveFile })),
          ];
          const snapshot = toSnapshot(replayActions(actions), { version: 1, timestamp: NOW });
          const store = new MemoryObjectStore(() => NOW);
          await writeCheckpoint(store, duck, scratch, snapshot, NOW);
          const bytes = await store.get(checkpointKey(1));
          expect(decoded(bytes)).toEqual(await reference(bytes));
        },
      ),
      { numRuns: 40 },
    );
  });

  it("reads every string of a PLAIN page as written, long or short, ASCII or not", async () => {
    // An all-ASCII page's values are sliced from one latin1 read; a page with a value of 128 bytes
    // or more (its length prefix is not ASCII) or a non-ASCII value is decoded value by value.
    const unit = fc.oneof(
      { weight: 30, arbitrary: fc.constantFrom("a", "Z", "0", "{", '"', ":", "\\", " ") },
      { weight: 1, arbitrary: fc.constantFrom("é", "€", "😀", "\u0080", "\u00ff", "\ufeff") },
    );
    await fc.assert(
      fc.asyncProperty(
        fc.uniqueArray(
          fc.record({
            path: fc.stringMatching(/^[a-z0-9]{1,12}$/),
            stats: fc.string({ unit, maxLength: 300 }),
          }),
          { selector: (file) => file.path, minLength: 1, maxLength: 30 },
        ),
        async (files) => {
          const actions: Action[] = [
            commitInfo(NOW),
            protocol(),
            metaData({ partitionColumns: [] }),
            ...files.map(({ path, stats }): Action => ({
              add: { path, stats, partitionValues: {}, size: 1, modificationTime: NOW, dataChange: true },
            })),
          ];
          const snapshot = toSnapshot(replayActions(actions), { version: 1, timestamp: NOW });
          const store = new MemoryObjectStore(() => NOW);
          await writeCheckpoint(store, duck, scratch, snapshot, NOW);
          const bytes = await store.get(checkpointKey(1));
          // As written (not hyparquet's reference, whose decoder drops a leading U+FEFF).
          const stats = decoded(bytes).actions.flatMap((action) =>
            "add" in action ? [action.add.stats] : [],
          );
          expect(stats.sort()).toEqual(files.map((file) => file.stats).sort());
        },
      ),
      // Always one value led by U+FEFF, which a default TextDecoder drops as a byte-order mark.
      { numRuns: 40, examples: [[[{ path: "a", stats: "\ufeff{}" }]]] },
    );
  });

  it("gives the actions and tombstones of the whole rows for every checkpoint of the conformance corpus", async () => {
    const files: string[] = [];
    const walk = (folder: string) => {
      for (const entry of readdirSync(folder, { withFileTypes: true })) {
        const at = path.join(folder, entry.name);
        if (entry.isDirectory()) walk(at);
        else if (/\.checkpoint(\.\d+\.\d+)?\.parquet$/.test(entry.name)) files.push(at);
      }
    };
    if (existsSync(CORPUS)) walk(CORPUS);
    expect(files.length).toBeGreaterThan(0);
    for (const file of files) {
      const bytes = new Uint8Array(readFileSync(file));
      const [got, want] = await Promise.all([decoded(bytes), reference(bytes)]);
      // Spark's checkpoints may hold stats only as stats_parsed: those the reader turns into JSON.
      const plain = (actions: Action[]) =>
        actions.map((action) => ("add" in action ? { add: { ...action.add, stats: undefined } } : action));
      expect({ file, actions: plain(got.actions), removes: got.removes }).toEqual({
        file,
        actions: plain(want.actions),
        removes: want.removes,
      });
    }
  });
});
