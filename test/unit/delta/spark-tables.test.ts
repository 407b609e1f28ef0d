import { readdir, readFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Metadata, Protocol } from "../../../shared/delta/log/actions.ts";
import { DeltaTable } from "../../../shared/delta/delta-table.ts";
import { UnsupportedFeatureError } from "../../../shared/delta/errors.ts";
import { LAST_CHECKPOINT_KEY } from "../../../shared/delta/log/log-paths.ts";
import { loadSnapshot } from "../../../shared/delta/read/snapshot-loader.ts";
import { assertWritable } from "../../../shared/delta/table/writer-features.ts";
import { DuckSession, type DuckRow } from "../../../shared/duck/duck-session.ts";
import { MemoryObjectStore } from "../../../shared/object-store/memory-object-store.ts";
import { ManualClock } from "./delta-test-kit.ts";

/** Ebb writing to tables Spark wrote (the DAT corpus), and reading its own writes back. */
const DAT = path.resolve(import.meta.dirname, "../../../../shared/conformance/delta/dat-v0.0.2");

async function loadFolder(folder: string, store: MemoryObjectStore, prefix = ""): Promise<void> {
  for (const entry of await readdir(folder, { withFileTypes: true })) {
    const full = path.join(folder, entry.name);
    if (entry.isDirectory()) await loadFolder(full, store, `${prefix}${entry.name}/`);
    else await store.put(`${prefix}${entry.name}`, await readFile(full));
  }
}

const rowsOf = (rows: readonly DuckRow[]) =>
  rows.map((r) => JSON.stringify([r.letter, r.number === null ? null : Number(r.number), r.a_float])).sort();

describe("writing tables Spark wrote", () => {
  let duck: DuckSession;
  beforeAll(async () => {
    duck = await DuckSession.open();
  });
  afterAll(() => duck.close());

  it("appends, updates and deletes in a partitioned table with a null partition, then restores it", async () => {
    const clock = new ManualClock(Date.parse("2026-01-01T00:00:00Z"));
    const store = new MemoryObjectStore(clock.read);
    await loadFolder(path.join(DAT, "basic_partitioned/delta"), store);
    const table = await DeltaTable.open(store, { clock: clock.read, duck });
    const sparkVersion = table.snapshot.version;
    const original = rowsOf(await table.scan());
    expect(original).toHaveLength(6);

    await table.append({ rows: [{ letter: "z", number: 26, a_float: 26.5 }] });
    await table.update({ set: { number: "number * 10" }, where: "letter = 'a'" });
    await table.delete("letter IS NULL");
    const changed = rowsOf(await table.scan());
    expect(changed).toContain(JSON.stringify(["z", 26, 26.5]));
    expect(changed.filter((r) => r.startsWith("[null"))).toEqual([]);
    expect(changed.filter((r) => r.startsWith('["a"')).every((r) => JSON.parse(r)[1] % 10 === 0)).toBe(true);

    await table.restore({ to: { version: sparkVersion } });
    expect(rowsOf(await table.scan())).toEqual(original);
    await table.close();
  });

  it("continues a Spark table's checkpoints at its delta.checkpointInterval", async () => {
    const store = new MemoryObjectStore();
    await loadFolder(path.join(DAT, "with_checkpoint/delta"), store);
    const table = await DeltaTable.open(store, { duck });
    expect(table.snapshot.version).toBe(3);
    const result = await table.append({ rows: [{ letter: "q", int: 1, date: "2026-01-01" }] });
    expect(result).toMatchObject({ status: "committed", version: 4, checkpoint: { version: 4 } });
    expect(JSON.parse(new TextDecoder().decode(await store.get(LAST_CHECKPOINT_KEY)))).toMatchObject({
      version: 4,
    });
    const reloaded = await loadSnapshot(store);
    expect([...reloaded.files.keys()].sort()).toEqual([...table.snapshot.files.keys()].sort());
    await table.close();
  });
});

describe("writer features", () => {
  const metadata = (schema: object, configuration: Record<string, string> = {}): Metadata => ({
    id: "t",
    format: { provider: "parquet", options: {} },
    schemaString: JSON.stringify(schema),
    partitionColumns: [],
    configuration,
  });
  const plain = { type: "struct", fields: [{ name: "a", type: "long", nullable: true, metadata: {} }] };
  const v = (minWriterVersion: number, writerFeatures?: string[]): Protocol => ({
    minReaderVersion: writerFeatures ? 3 : 1,
    minWriterVersion,
    ...(writerFeatures ? { readerFeatures: [], writerFeatures } : {}),
  });

  it("accepts writer versions 2 to 4 and 7 with supported features", () => {
    expect(() => assertWritable(v(2), metadata(plain))).not.toThrow();
    expect(() => assertWritable(v(4), metadata(plain))).not.toThrow();
    expect(() => assertWritable(v(7, ["appendOnly", "changeDataFeed"]), metadata(plain))).not.toThrow();
  });

  it("refuses what it would break: column mapping, identity, deletion vectors, constraints, generated columns", () => {
    expect(() => assertWritable(v(5), metadata(plain))).toThrow(UnsupportedFeatureError);
    expect(() => assertWritable(v(6), metadata(plain))).toThrow(/writerVersion 6/);
    expect(() => assertWritable(v(7, ["deletionVectors"]), metadata(plain))).toThrow(/deletionVectors/);
    expect(() => assertWritable(v(3), metadata(plain, { "delta.constraints.positive": "a > 0" }))).toThrow(
      /CHECK constraint/,
    );
    const generated = {
      type: "struct",
      fields: [
        { name: "a", type: "long", nullable: true, metadata: { "delta.generationExpression": "b + 1" } },
      ],
    };
    expect(() => assertWritable(v(4), metadata(generated))).toThrow(/column a is generated/);
  });
});
