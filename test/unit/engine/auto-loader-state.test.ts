import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { fitRows, planFileBatch } from "../../../shared/engine/auto-loader-source.ts";
import { countNonBlankLines, LineCounter } from "../../../shared/engine/line-count.ts";
import { CheckpointStateError } from "../../../shared/engine/errors.ts";
import { COMPACTION_INTERVAL, FileSetState } from "../../../shared/engine/file-set-state.ts";
import { flowStatePrefix } from "../../../shared/store/bucket-layout.ts";
import type { FileSetOffset } from "../../../shared/engine/source-offsets.ts";
import { MemoryObjectStore } from "../../../shared/object-store/memory-object-store.ts";
import { listAllKeys } from "../../../shared/object-store/object-store.ts";

describe("planning an auto_loader batch", () => {
  it("takes unprocessed files in key order, including late ones that sort before processed files", () => {
    const processed = new Set(["2026/02/b.json", "2026/02/c.json"]);
    const listed = ["2026/02/c.json", "2026/02/d.json", "2026/01/late.json", "2026/02/b.json"];
    expect(planFileBatch(listed, processed, 10)).toEqual(["2026/01/late.json", "2026/02/d.json"]);
    expect(planFileBatch(listed, processed, 1)).toEqual(["2026/01/late.json"]);
  });

  it("skips hidden files and folders (_SUCCESS, .crc, _temporary/)", () => {
    const listed = ["a.json", "_SUCCESS", ".a.json.crc", "_temporary/x.json", "sub/.hidden", "sub/b.json"];
    expect(planFileBatch(listed, new Set(), 10)).toEqual(["a.json", "sub/b.json"]);
  });
});

describe("counting records while landing", () => {
  const count = (text: string) => countNonBlankLines(new TextEncoder().encode(text));
  it("counts lines with content, with or without a final newline, ignoring blank ones", () => {
    expect(count("")).toBe(0);
    expect(count("{}")).toBe(1);
    expect(count("{}\n{}\n")).toBe(2);
    expect(count("{}\r\n\r\n  \n\t{} \n{}")).toBe(3);
  });

  it("counts the same however the file's bytes are cut into the pieces it is read in", () => {
    const text = fc
      .array(fc.constantFrom("{}", "a", " ", "\t", "\r", "\n"), { maxLength: 60 })
      .map((s) => s.join(""));
    fc.assert(
      fc.property(text, fc.array(fc.nat(60)), (body, cuts) => {
        const bytes = new TextEncoder().encode(body);
        const at = [...new Set(cuts.map((c) => c % (bytes.length + 1)))].sort((a, b) => a - b);
        const counter = new LineCounter();
        [0, ...at].forEach((start, i) => counter.add(bytes.subarray(start, at[i] ?? bytes.length)));
        const expected = body.split("\n").filter((line) => line.trim() !== "").length;
        expect(counter.lines).toBe(expected);
        expect(countNonBlankLines(bytes)).toBe(expected);
      }),
    );
  });
});

describe("a row bound over landed files", () => {
  it("keeps the longest run of files within the bound, and at least one (a file is never split)", () => {
    fc.assert(
      fc.property(fc.array(fc.nat(50)), fc.integer({ min: 1, max: 100 }), (records, maxRows) => {
        const kept = fitRows(records, maxRows);
        const rows = records.slice(0, kept).reduce((sum, n) => sum + n, 0);
        expect(kept).toBe(records.length === 0 ? 0 : Math.max(1, kept));
        if (kept > 1) expect(rows).toBeLessThanOrEqual(maxRows);
        if (kept < records.length) expect(rows + records[kept]!).toBeGreaterThan(maxRows);
      }),
    );
  });
});

describe("the processed-file set", () => {
  it("writes one changelog per batch, and a snapshot every COMPACTION_INTERVAL batches", async () => {
    const store = new MemoryObjectStore();
    const state = new FileSetState(store, "p1", "ingest");
    let offset: FileSetOffset | undefined;
    const batches = COMPACTION_INTERVAL + 3;
    for (let seq = 1; seq <= batches; seq++) {
      const processed = await state.load(offset);
      expect(processed.size).toBe(seq - 1);
      offset = await state.append(offset, processed, seq, [`file-${seq}.json`]);
      expect(await state.batchFiles(offset)).toEqual([`file-${seq}.json`]);
    }
    expect(offset!.fileCount).toBe(batches);
    expect(offset!.snapshot).toBeDefined();
    expect(offset!.changelogs.length).toBeLessThan(COMPACTION_INTERVAL);
    expect((await state.load(offset)).size).toBe(batches);
    const keys = (await listAllKeys(store, flowStatePrefix("p1", "ingest"))).map((o) => o.key);
    // Every file is `<seq>-<uuid>.json`, immutable: older offsets stay readable.
    expect(keys.every((key) => /^state\/p1\/ingest\/\d{10}-[0-9a-f-]{36}\.json$/.test(key))).toBe(true);
  });

  it("reads each state file from the store once per process: a batch that finds nothing new GETs none", async () => {
    const store = new MemoryObjectStore();
    const gets: string[] = [];
    const counting = new Proxy(store, {
      get(target, name) {
        if (name === "get") return (key: string) => (gets.push(key), target.get(key));
        const value = Reflect.get(target, name, target) as unknown;
        return typeof value === "function" ? value.bind(target) : value;
      },
    });
    const state = new FileSetState(counting, "p1", "ingest");
    let offset: FileSetOffset | undefined;
    for (let seq = 1; seq <= 5; seq++)
      offset = await state.append(offset, await state.load(offset), seq, [`f${seq}`]);
    gets.length = 0;
    const first = await state.load(offset);
    expect(gets).toEqual([offset!.changelogs.at(-1)]); // the earlier batches' loads read the rest
    gets.length = 0;
    // Another flow runner of the same process (a warm Lambda's next invocation): nothing to read.
    expect(await new FileSetState(counting, "p1", "ingest").load(offset)).toEqual(first);
    expect(gets).toEqual([]);
  });

  it("fails with what to do when a referenced state file is gone", async () => {
    const store = new MemoryObjectStore();
    const state = new FileSetState(store, "p1", "ingest");
    const offset = await state.append(undefined, new Set(), 1, ["a.json"]);
    await store.delete(offset.changelogs[0]!);
    await expect(state.load(offset)).rejects.toThrow(CheckpointStateError);
    await expect(state.load(offset)).rejects.toThrow(/reset the flow's checkpoint.*or fully refresh/);
  });
});
