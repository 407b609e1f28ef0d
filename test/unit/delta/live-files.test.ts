import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { AddFile } from "../../../shared/delta/log/actions.ts";
import { LiveFiles } from "../../../shared/delta/log/live-files.ts";

/**
 * A table state's live files over a checkpoint's (whose actions are built only when read) behave as
 * the `Map` the eager replay made: the checkpoint's adds set in order, then each commit's add and
 * remove, a copy changed apart from its original.
 */

const KEYS = ["a", "b", "c", "d", "e", "f"];
const key = fc.constantFrom(...KEYS);

function add(path: string, size: number): AddFile {
  return { path, partitionValues: {}, size, modificationTime: 0, dataChange: true };
}

type Step = { kind: "set"; key: string; size: number } | { kind: "delete"; key: string } | { kind: "copy" };
const step: fc.Arbitrary<Step> = fc.oneof(
  fc.record({ kind: fc.constant("set" as const), key, size: fc.nat(99) }),
  fc.record({ kind: fc.constant("delete" as const), key }),
  fc.constant({ kind: "copy" as const }),
);

function expectSame(files: LiveFiles, reference: ReadonlyMap<string, AddFile>): void {
  expect(files.size).toBe(reference.size);
  expect([...files.keys()]).toEqual([...reference.keys()]);
  expect([...files.entries()]).toEqual([...reference.entries()]);
  expect([...files.values()]).toEqual([...reference.values()]);
  const each: [string, AddFile][] = [];
  files.forEach((value, k) => each.push([k, value]));
  expect(each).toEqual([...reference]);
  for (const k of KEYS) {
    expect(files.has(k)).toBe(reference.has(k));
    expect(files.get(k)).toEqual(reference.get(k));
  }
}

describe("live files over a checkpoint's", () => {
  it("are the Map of the eager replay after any adds and removes, copies apart", () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(key, fc.nat(99)), { maxLength: 8 }),
        fc.array(step, { maxLength: 20 }),
        (rows, steps) => {
          const adds = rows.map(([path, size]) => add(path, size));
          let built = 0;
          let files = LiveFiles.fromCheckpoint({
            keys: adds.map((file) => file.path),
            actions: () => {
              built += 1;
              return adds;
            },
          });
          let reference = new Map<string, AddFile>();
          for (const file of adds) reference.set(file.path, file);
          const kept: [LiveFiles, Map<string, AddFile>][] = [];
          for (const s of steps) {
            if (s.kind === "set") {
              files.set(s.key, add(s.key, s.size + 100));
              reference.set(s.key, add(s.key, s.size + 100));
            } else if (s.kind === "delete") expect(files.delete(s.key)).toBe(reference.delete(s.key));
            else {
              kept.push([files, reference]);
              [files, reference] = [files.copy(), new Map(reference)];
            }
          }
          expectSame(files, reference);
          for (const [original, itsReference] of kept) expectSame(original, itsReference);
          expectSame(LiveFiles.of(files), reference);
          expect(built).toBeLessThanOrEqual(1);
        },
      ),
      { numRuns: 300 },
    );
  });

  it("build the checkpoint's actions only when one is read", () => {
    let built = 0;
    const files = LiveFiles.fromCheckpoint({
      keys: ["a", "b"],
      actions: () => {
        built += 1;
        return [add("a", 1), add("b", 2)];
      },
    });
    files.delete("a");
    files.set("c", add("c", 3));
    expect([files.size, files.has("b"), files.has("a"), [...files.keys()]]).toEqual([
      2,
      true,
      false,
      ["b", "c"],
    ]);
    expect(built).toBe(0);
    expect(files.get("b")?.size).toBe(2);
    expect([...files.values()].map((file) => file.size)).toEqual([2, 3]);
    expect(built).toBe(1);
  });
});
