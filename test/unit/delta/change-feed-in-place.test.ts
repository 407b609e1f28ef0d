import { mkdtemp, rm } from "node:fs/promises";
import { unlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DeltaTable } from "../../../shared/delta/delta-table.ts";
import { DataFilesVacuumedError } from "../../../shared/delta/errors.ts";
import { DuckSession } from "../../../shared/duck/duck-session.ts";
import { LocalObjectStore } from "../../../shared/object-store/local-object-store.ts";
import { field, schemaOf } from "./delta-test-kit.ts";

/**
 * `DeltaTable.changes` on a local folder reads the feed's files where they are, not linked into a
 * scratch folder; a path DuckDB would read as a glob is linked as before, and a file removed before
 * or while it is read is answered as a vacuumed one (DATA_FILES_VACUUMED), not as DuckDB's IO error.
 */

/** A local store that counts links into scratch folders and can remove a file once it was checked. */
class WatchedStore extends LocalObjectStore {
  copies = 0;
  removeAfterCheck: string | undefined;
  override async copyToFile(key: string, file: string): Promise<void> {
    this.copies++;
    await super.copyToFile(key, file);
  }
  override localFile(key: string): string | undefined {
    const file = super.localFile(key);
    if (file && key === this.removeAfterCheck) {
      this.removeAfterCheck = undefined;
      unlinkSync(file);
    }
    return file;
  }
}

let duck: DuckSession;
let dir: string;
beforeAll(async () => {
  duck = await DuckSession.open();
  dir = await mkdtemp(path.join(tmpdir(), "ebb-feed-in-place-"));
});
afterAll(async () => {
  duck?.close();
  await rm(dir, { recursive: true, force: true });
});

async function tableIn(folder: string): Promise<{ store: WatchedStore; table: DeltaTable }> {
  const store = new WatchedStore(path.join(dir, folder));
  const table = await DeltaTable.create(
    store,
    // A date column: a feed the in-process reader leaves to DuckDB (change-rows-in-process.ts), whose
    // reading of local files these tests are about.
    {
      schema: schemaOf(field("id", "long"), field("day", "date")),
      properties: { "delta.enableChangeDataFeed": "true" },
    },
    { duck },
  );
  for (let id = 1; id <= 3; id++) await table.append({ rows: [{ id }] });
  return { store, table };
}

const ids = (rows: readonly Record<string, unknown>[]) => rows.map((r) => Number(r["id"])).sort();

describe("change feed of a local table", () => {
  it("reads the files in place: no link, the same rows", async () => {
    const { store, table } = await tableIn("plain");
    expect(ids(await table.changes(1, 3))).toEqual([1, 2, 3]);
    expect(store.copies).toBe(0);
  });

  it("links the files where the table's path holds a glob character", async () => {
    const { store, table } = await tableIn("with [brackets] *");
    expect(ids(await table.changes(1, 3))).toEqual([1, 2, 3]);
    expect(store.copies).toBe(3);
  });

  it("answers a file removed after the check as vacuumed", async () => {
    const { store, table } = await tableIn("raced");
    const add = table.snapshot.files.values().next().value!;
    store.removeAfterCheck = add.path;
    const error = await table.changes(1, 3).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DataFilesVacuumedError);
    expect(store.removeAfterCheck).toBeUndefined();
  });
});

describe("change feed of tiny files, read in process", () => {
  it("answers a file removed before it is read as vacuumed", async () => {
    const store = new LocalObjectStore(path.join(dir, "in-process"));
    const table = await DeltaTable.create(
      store,
      { schema: schemaOf(field("id", "long")), properties: { "delta.enableChangeDataFeed": "true" } },
      { duck },
    );
    for (let id = 1; id <= 3; id++) await table.append({ rows: [{ id }] });
    expect(ids(await table.changes(1, 3))).toEqual([1, 2, 3]);
    const add = table.snapshot.files.values().next().value!;
    unlinkSync(store.localFile(add.path)!);
    const error = await table.changes(1, 3).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DataFilesVacuumedError);
    await table.close();
  });
});
