import { mkdir, mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { DeltaTable, type StructType } from "../../../shared/delta/index.ts";
import { DuckSession } from "../../../shared/duck/duck-session.ts";
import { ScratchFolder } from "../../../shared/duck/scratch-folder.ts";
import { LocalObjectStore } from "../../../shared/object-store/local-object-store.ts";

const schema: StructType = {
  type: "struct",
  fields: [{ name: "id", type: "long", nullable: false, metadata: {} }],
};

let duck: DuckSession;
let root: string;
let temp: string;
const savedTmp = process.env["TMPDIR"];
beforeAll(async () => {
  duck = await DuckSession.open();
});
afterAll(() => duck?.close());
afterEach(async () => {
  if (savedTmp === undefined) delete process.env["TMPDIR"];
  else process.env["TMPDIR"] = savedTmp;
  await rm(root, { recursive: true, force: true });
});

/** The scratch folders in the temporary folder (a writer's process-wide FIFO pool, `ebb-pipes-`, stays). */
async function scratchFolders(): Promise<string[]> {
  return (await readdir(temp)).filter((name) => !name.startsWith("ebb-pipes-"));
}

/** A fresh temporary folder for the process's scratch folders (`os.tmpdir()` reads TMPDIR each call). */
async function isolatedTmp(): Promise<void> {
  root = await mkdtemp(path.join(tmpdir(), "deferred-scratch-"));
  temp = path.join(root, "tmp");
  await mkdir(temp);
  process.env["TMPDIR"] = temp;
}

describe("a table's scratch folder", () => {
  it("is not made by reads that write nothing locally: open, change feed, scan, VACUUM, close", async () => {
    await isolatedTmp();
    const store = new LocalObjectStore(path.join(root, "table"));
    const created = await DeltaTable.create(
      store,
      { schema, properties: { "delta.enableChangeDataFeed": "true" } },
      { duck },
    );
    await created.append({ rows: [{ id: 1 }] });
    await created.delete();
    await created.close();
    expect(await scratchFolders()).toEqual([]);

    const table = await DeltaTable.open(store, { duck });
    expect((await table.changes(1, 1)).map((row) => row["_change_type"])).toEqual(["insert"]);
    expect(await DeltaTable.scanAt(store, { version: 1 }, { duck })).toEqual([{ id: 1n }]);
    const vacuumed = await table.vacuum({ retentionHours: 0, allowShortRetention: true });
    expect(vacuumed.filesToDelete.length).toBe(1);
    expect(await scratchFolders()).toEqual([]);
    await table.close();
    expect(await scratchFolders()).toEqual([]);
  });

  it("is made when first needed, written to, and removed whole on dispose", async () => {
    await isolatedTmp();
    const scratch = ScratchFolder.deferred("ebb-test-");
    expect(await scratchFolders()).toEqual([]);
    const file = await scratch.write(new Uint8Array([1, 2, 3]), ".bin");
    expect(path.dirname(file)).toBe(scratch.dir);
    expect(await scratchFolders()).toEqual([path.basename(scratch.dir)]);
    expect(path.basename(scratch.dir)).toMatch(new RegExp(`^ebb-test-${process.pid}-`));
    await scratch.dispose();
    expect(await scratchFolders()).toEqual([]);
    await ScratchFolder.deferred().dispose(); // never made: nothing to remove
  });
});
