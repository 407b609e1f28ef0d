import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { createFlowSource, type FlowSource } from "../../shared/engine/flow-source.ts";
import { FileSetState } from "../../shared/engine/file-set-state.ts";
import { INCREMENTAL_LISTINGS_BETWEEN_FULL } from "../../shared/engine/incremental-listing.ts";
import type { FileSetOffset, SourceOffset } from "../../shared/engine/source-offsets.ts";
import type { IncrementalListingMode } from "../../shared/pipeline/definition-schema.ts";
import { MemoryObjectStore } from "../../shared/store/memory-object-store.ts";
import type { ListOptions, ObjectStore } from "../../shared/store/object-store.ts";

/**
 * An auto_loader source under `use_incremental_listing: auto`, against a
 * reference model of arrivals: files land under names drawn from a small alphabet, so many sort
 * before files already processed (late uploads), between updates that plan batches until one takes
 * all its listing found (as the flow runner does), and rewinds to the state after an earlier update
 * (a checkpoint's offsets, so its listing state too). Every batch takes only files that landed and
 * were never taken before on its timeline (no file read twice); the update after a rewind takes every
 * file the restored point had not (a replay misses none); once files stop landing, at most two more
 * updates take every file not yet taken (no file skipped). The planning is the engine's own
 * (flow-source.ts over the file-set state in a memory store); no batch is loaded.
 *
 * RUNS sets the number of runs (default 100).
 */

type Step =
  | { readonly kind: "land"; readonly name: string }
  | { readonly kind: "update" }
  | { readonly kind: "rewind"; readonly back: number };

const name = fc
  .tuple(fc.constantFrom("a", "b", "m", "y", "z"), fc.nat({ max: 99 }))
  .map(([prefix, n]) => `${prefix}/${String(n).padStart(2, "0")}.json`);
const step: fc.Arbitrary<Step> = fc.oneof(
  { weight: 3, arbitrary: name.map((n) => ({ kind: "land" as const, name: n })) },
  { weight: 2, arbitrary: fc.constant({ kind: "update" as const }) },
  { weight: 1, arbitrary: fc.nat({ max: 5 }).map((back) => ({ kind: "rewind" as const, back })) },
);

/** The landing store, counting full and incremental listings (a listing's first page). */
class CountedStore extends MemoryObjectStore {
  full = 0;
  incremental = 0;
  override list(prefix: string, options: ListOptions = {}) {
    if (options.pageToken === undefined) {
      if (options.startAfter === undefined) this.full += 1;
      else this.incremental += 1;
    }
    return super.list(prefix, options);
  }
}

function harness(mode: IncrementalListingMode | undefined, maxFiles: number) {
  const landing = new CountedStore();
  const bucket: ObjectStore = new MemoryObjectStore();
  const ids = { pipelineId: "p", flowName: "ingest" };
  const source: FlowSource = createFlowSource({
    ...ids,
    datasetName: "raw",
    source: { type: "auto_loader", path: "s3://landing/", format: "json" },
    options: {
      bad_records: "fail",
      max_files_per_batch: maxFiles,
      ...(mode ? { use_incremental_listing: mode } : {}),
    },
    store: bucket,
    datasetTable: () => bucket,
    locate: () => landing,
    eventStreams: undefined as never,
    sandbox: () => Promise.reject(new Error("planning lands no file")),
    clock: () => 1_760_000_000_000,
  });
  const state = new FileSetState(bucket, ids.pipelineId, ids.flowName);
  let offset: SourceOffset | undefined;
  // Seqs only grow: a batch after a rewind takes one above every seq ever planned (micro-batch.ts).
  let seq = 0;
  return {
    landing,
    /** The offsets after the last batch (a checkpoint's), and a rewind back to some. */
    get offset() {
      return offset;
    },
    rewindTo(restored: SourceOffset | undefined) {
      offset = restored;
    },
    land: (key: string) => landing.put(key, new TextEncoder().encode('{"id":1}\n')),
    /** Plans (and so commits) batches until one is caught up or none is planned; answers their files. */
    async update(): Promise<string[][]> {
      const batches: string[][] = [];
      for (let n = 0; n < 200; n++) {
        const planned = await source.plan(offset, ++seq);
        if (!planned) return batches;
        offset = planned.end;
        batches.push([...(await state.batchFiles(planned.end as FileSetOffset))]);
        if (planned.caughtUp) return batches;
      }
      throw new Error("an update planned 200 batches");
    },
  };
}

describe("auto_loader listing", () => {
  it("reads every landed file once under the default listing, late names included", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(step, { maxLength: 40 }),
        fc.integer({ min: 1, max: 4 }),
        async (steps, maxFiles) => {
          const h = harness("auto", maxFiles);
          const landed = new Set<string>();
          let taken = new Set<string>();
          // After each update: its offsets and the files taken up to it (a rewind point).
          const points: { offset: SourceOffset | undefined; taken: Set<string> }[] = [];
          const take = (batches: string[][]) => {
            for (const batch of batches) {
              expect(batch.length).toBeGreaterThan(0);
              expect(batch.length).toBeLessThanOrEqual(maxFiles);
              for (const file of batch) {
                expect(landed.has(file), `${file} was taken before it landed`).toBe(true);
                expect(taken.has(file), `${file} was taken twice`).toBe(false);
                taken.add(file);
              }
            }
          };
          for (const s of steps) {
            if (s.kind === "land") {
              // A file lands once: a new name each time (files are immutable).
              if (landed.has(s.name)) continue;
              landed.add(s.name);
              await h.land(s.name);
            } else if (s.kind === "rewind") {
              const point = points.at(-1 - (s.back % Math.max(points.length, 1)));
              // A rewind to where the flow is abandons no batch: there is nothing to replay.
              if (!point || point.offset === h.offset) continue;
              h.rewindTo(point.offset);
              taken = new Set(point.taken);
              take(await h.update());
              expect([...taken].sort(), "the replay after a rewind missed a file").toEqual(
                [...landed].sort(),
              );
              points.push({ offset: h.offset, taken: new Set(taken) });
            } else {
              take(await h.update());
              points.push({ offset: h.offset, taken: new Set(taken) });
            }
          }
          // Updates until one takes nothing: a late name waits at most for the update after the
          // one that took the last in-order name (its listing finds nothing new, so it lists in full).
          let more = 0;
          for (let batches = await h.update(); batches.length > 0; batches = await h.update()) {
            take(batches);
            more += 1;
          }
          expect(more).toBeLessThanOrEqual(2);
          expect([...taken].sort()).toEqual([...landed].sort());
        },
      ),
      { numRuns: Number(process.env["RUNS"] ?? 100) },
    );
  }, 120_000);

  it("lists incrementally while names arrive in order, in full every 8th batch", async () => {
    const h = harness("auto", 1);
    const batches = 3 * (INCREMENTAL_LISTINGS_BETWEEN_FULL + 1);
    for (let i = 0; i < batches; i++) {
      await h.land(`f${String(i).padStart(4, "0")}.json`);
      expect(await h.update()).toEqual([[`f${String(i).padStart(4, "0")}.json`]]);
    }
    // Each update lists once, incrementally but for the first; every 8th batch takes its file from
    // a full listing after the incremental one.
    expect(h.landing.full).toBe(3);
    expect(h.landing.incremental).toBe(batches - 1);
  });

  it("lists in full once a late name showed the path is not ordered, and always with false", async () => {
    for (const mode of ["auto", "false"] as const) {
      const h = harness(mode, 10);
      await h.land("b.json");
      await h.update();
      await h.land("a.json");
      expect(await h.update()).toEqual([["a.json"]]);
      const full = h.landing.full;
      await h.land("c.json");
      expect(await h.update()).toEqual([["c.json"]]);
      expect(h.landing.full - full).toBe(1);
    }
  });

  it("never sees a late name with true", async () => {
    const h = harness("true", 10);
    await h.land("b.json");
    await h.update();
    await h.land("a.json");
    expect(await h.update()).toEqual([]);
  });
});
