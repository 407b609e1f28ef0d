import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { createFlowSource, type FlowSource } from "../../shared/engine/flow-source.ts";
import { FileSetState } from "../../shared/engine/file-set-state.ts";
import {
  IdleListings,
  INCREMENTAL_LISTINGS_BETWEEN_FULL,
  ONE_LISTING_PAGE,
} from "../../shared/engine/incremental-listing.ts";
import type { FileSetOffset, SourceOffset } from "../../shared/engine/source-offsets.ts";
import type { IncrementalListingMode } from "../../shared/pipeline/definition-schema.ts";
import { MemoryObjectStore } from "../../shared/object-store/memory-object-store.ts";
import type { ListOptions, ObjectStore } from "../../shared/object-store/object-store.ts";

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
  // Each harness is a process of its own: what it remembers of its listings is its alone.
  const flowSource = (): FlowSource =>
    createFlowSource({
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
      idleListings: new IdleListings(),
    });
  let source = flowSource();
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
    /** Goes on in another process (a cold Lambda): the same stores and offsets, nothing remembered. */
    restart() {
      source = flowSource();
    },
    land: (key: string) => landing.put(key, new TextEncoder().encode('{"id":1}\n')),
    /** Plans (and so commits) batches until one is caught up or none is planned; answers their files. */
    async update(): Promise<string[][]> {
      const batches: string[][] = [];
      for (let n = 0; n < 200; n++) {
        // An update that plans nothing takes no seq: the next plan is offered the same (micro-batch.ts).
        const planned = await source.plan(offset, seq + 1);
        if (!planned) return batches;
        seq += 1;
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
  });

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

  it("past one LIST page, lists an idle path in full at every 8th listing, or first in a cold process", async () => {
    const h = harness("auto", ONE_LISTING_PAGE);
    const names = Array.from(
      { length: ONE_LISTING_PAGE },
      (_, i) => `f${String(i + 1).padStart(5, "0")}.json`,
    );
    for (const key of names) await h.land(key);
    expect((await h.update()).flat()).toHaveLength(ONE_LISTING_PAGE); // a full listing: the first
    await h.land("f00000.json"); // a late name: only a full listing finds it
    const found: number[] = [];
    for (let i = 1; i <= INCREMENTAL_LISTINGS_BETWEEN_FULL + 2; i++) {
      const taken = (await h.update()).flat();
      if (taken.length > 0) found.push(i);
    }
    // The 8th listing after the batch is followed by a full one, which takes the late name (and
    // finds the path unordered: every later listing is full).
    expect(found).toEqual([INCREMENTAL_LISTINGS_BETWEEN_FULL + 1]);
    expect(h.landing.incremental).toBe(INCREMENTAL_LISTINGS_BETWEEN_FULL + 1);
    expect(h.landing.full).toBe(1 + 1 + 1);

    // In order, an idle path stays incremental but for every 8th listing; a process that has not
    // seen the last batch lists in full at its first update that finds nothing.
    const ordered = harness("auto", ONE_LISTING_PAGE);
    for (const key of names) await ordered.land(key);
    await ordered.update();
    const idle = 2 * (INCREMENTAL_LISTINGS_BETWEEN_FULL + 1);
    for (let i = 0; i < idle; i++) expect(await ordered.update()).toEqual([]);
    expect([ordered.landing.full, ordered.landing.incremental]).toEqual([1 + 2, idle]);
    ordered.restart();
    expect(await ordered.update()).toEqual([]);
    expect(await ordered.update()).toEqual([]);
    expect([ordered.landing.full, ordered.landing.incremental]).toEqual([1 + 2 + 1, idle + 2]);
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
