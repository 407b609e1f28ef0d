import { readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { DeltaTable, loadSnapshot, UnsupportedFeatureError } from "../../../shared/delta/index.ts";
import { InvalidTablePropertyError } from "../../../shared/delta/errors.ts";
import { checkpointKey } from "../../../shared/delta/log/log-paths.ts";
import type { DuckSession } from "../../../shared/duck/duck-session.ts";
import type { ScratchFolder } from "../../../shared/duck/scratch-folder.ts";
import { quoteLiteral } from "../../../shared/duck/sql-text.ts";
import { MemoryObjectStore } from "../../../shared/object-store/memory-object-store.ts";
import { byId, field, ManualClock, schemaOf } from "./delta-test-kit.ts";
import { add, commitInfo, metaData, protocol, writeCommit } from "./table-fixture.ts";
import { openDuckAndScratch } from "../../support/duck-and-scratch.ts";

/**
 * Writer-side table properties Ebb used to ignore: each is now obeyed or refused by name.
 * - `delta.parquet.compression.codec`: the data files' codec.
 * - `delta.dataSkippingNumIndexedCols`: how many leading columns get statistics.
 * - `delta.checkpoint.writeStatsAsJson=false`: checkpoints without `add.stats`.
 * - `delta.checkpoint.writeStatsAsStruct=true`: refused (Ebb writes no `stats_parsed`).
 * - VACUUM checks the writer protocol first (`vacuumProtocolCheck`).
 */

const schema = schemaOf(field("id", "long", false), field("a", "string"), field("b", "integer"));
const rows = { sql: "SELECT i::BIGINT AS id, 'x' || i AS a, i::INTEGER AS b FROM range(5) r(i)" };

describe("writer table properties", () => {
  let duck: DuckSession;
  let scratch: ScratchFolder;
  openDuckAndScratch((opened) => ({ duck, scratch } = opened));

  /** The codecs of a table's data files' column chunks, read from their parquet footers. */
  async function codecsOf(store: MemoryObjectStore): Promise<string[]> {
    const snapshot = await loadSnapshot(store);
    const codecs = new Set<string>();
    for (const file of snapshot.files.keys()) {
      const local = path.join(scratch.dir, `f-${codecs.size}-${Math.random()}.parquet`);
      await writeFile(local, await store.get(decodeURIComponent(file)));
      for (const row of await duck.rows(
        `SELECT DISTINCT compression FROM parquet_metadata(${quoteLiteral(local)})`,
      )) {
        codecs.add(String(row.compression));
      }
    }
    return [...codecs];
  }

  it.each([
    [undefined, "SNAPPY"],
    ["zstd", "ZSTD"],
    ["gzip", "GZIP"],
    ["uncompressed", "UNCOMPRESSED"],
  ])("delta.parquet.compression.codec=%s writes %s data files", async (codec, expected) => {
    const store = new MemoryObjectStore();
    const table = await DeltaTable.create(
      store,
      { schema, rows, ...(codec ? { properties: { "delta.parquet.compression.codec": codec } } : {}) },
      { duck },
    );
    await table.append({ sql: "SELECT 9::BIGINT AS id, 'y' AS a, 9 AS b" });
    await table.close();
    expect(await codecsOf(store)).toEqual([expected]);
  });

  it("refuses an unknown codec by the property's name", async () => {
    const refused = DeltaTable.create(new MemoryObjectStore(), {
      schema,
      properties: { "delta.parquet.compression.codec": "lzo" },
    });
    await expect(refused).rejects.toBeInstanceOf(InvalidTablePropertyError);
    await expect(refused).rejects.toThrow(/delta\.parquet\.compression\.codec="lzo"/);
  });

  it.each([
    ["1", ["id"]],
    ["2", ["id", "a"]],
    ["0", []],
    ["-1", ["id", "a", "b"]],
  ])("delta.dataSkippingNumIndexedCols=%s keeps stats for %j", async (n, columns) => {
    const store = new MemoryObjectStore();
    const table = await DeltaTable.create(
      store,
      { schema, rows, properties: { "delta.dataSkippingNumIndexedCols": n } },
      { duck },
    );
    await table.close();
    const [file] = (await loadSnapshot(store)).files.values();
    const stats = JSON.parse(file!.stats!) as { numRecords: number; nullCount?: Record<string, number> };
    expect(stats.numRecords).toBe(5);
    expect(Object.keys(stats.nullCount ?? {})).toEqual(columns);
  });

  it("delta.checkpoint.writeStatsAsJson=false writes checkpoints without add.stats, still readable", async () => {
    const store = new MemoryObjectStore();
    const table = await DeltaTable.create(
      store,
      {
        schema,
        rows,
        properties: { "delta.checkpoint.writeStatsAsJson": "false", "delta.checkpointInterval": "1" },
      },
      { duck },
    );
    await table.append({ sql: "SELECT 9::BIGINT AS id, 'y' AS a, 9 AS b" }); // checkpoints version 1
    await table.close();
    const local = path.join(scratch.dir, "checkpoint.parquet");
    await writeFile(local, await store.get(checkpointKey(1)));
    const [described] = await duck.rows(
      `SELECT column_type FROM (DESCRIBE SELECT add FROM read_parquet(${quoteLiteral(local)}))`,
    );
    expect(String(described!.column_type)).not.toMatch(/\bstats\b/);
    expect((await readFile(local)).byteLength).toBeGreaterThan(0);
    const reopened = await DeltaTable.open(store, { duck });
    expect(byId(await reopened.scan()).map((row) => row.id)).toEqual([0, 1, 2, 3, 4, 9]);
    await reopened.close();
  });

  it("refuses delta.checkpoint.writeStatsAsStruct=true, which Ebb would not honour", async () => {
    const refused = DeltaTable.create(new MemoryObjectStore(), {
      schema,
      properties: { "delta.checkpoint.writeStatsAsStruct": "true" },
    });
    await expect(refused).rejects.toThrow(/delta\.checkpoint\.writeStatsAsStruct="true".*stats_parsed/);
  });

  it('leaves void columns out of data files (PROTOCOL.md "Void Type"); they read as null', async () => {
    const store = new MemoryObjectStore();
    const table = await DeltaTable.create(
      store,
      {
        schema: schemaOf(field("id", "long", false), field("nothing", "void")),
        rows: { sql: "SELECT 1::BIGINT AS id, NULL AS nothing" },
      },
      { duck },
    );
    await table.close();
    const [file] = (await loadSnapshot(store)).files.keys();
    const local = path.join(scratch.dir, "void.parquet");
    await writeFile(local, await store.get(decodeURIComponent(file!)));
    const columns = await duck.rows(
      `SELECT name FROM parquet_schema(${quoteLiteral(local)}) WHERE name <> 'duckdb_schema'`,
    );
    expect(columns.map((c) => c.name)).toEqual(["id"]);
    const reopened = await DeltaTable.open(store, { duck });
    expect(await reopened.scan()).toEqual([{ id: 1n, nothing: null }]);
    await reopened.close();
  });

  it("VACUUM checks the writer protocol: a writer feature Ebb lacks refuses it, vacuumProtocolCheck alone does not", async () => {
    const clock = new ManualClock();
    const tableWith = async (writerFeatures: string[]) => {
      const store = new MemoryObjectStore(clock.read);
      const features = {
        minReaderVersion: 3,
        minWriterVersion: 7,
        readerFeatures: ["vacuumProtocolCheck"],
        writerFeatures,
      };
      await writeCommit(store, 0, [commitInfo(clock.read()), protocol(features), metaData(), add("f0")]);
      return store;
    };
    const guarded = await DeltaTable.open(await tableWith(["vacuumProtocolCheck", "rowTracking"]), {
      duck,
      clock: clock.read,
    });
    await expect(guarded.vacuum({ dryRun: true })).rejects.toBeInstanceOf(UnsupportedFeatureError);
    await expect(guarded.vacuum({ dryRun: true })).rejects.toThrow(/rowTracking/);
    await guarded.close();
    const plain = await DeltaTable.open(await tableWith(["vacuumProtocolCheck"]), {
      duck,
      clock: clock.read,
    });
    await expect(plain.vacuum({ dryRun: true })).resolves.toMatchObject({ deleted: false });
    await plain.close();
  });
});
