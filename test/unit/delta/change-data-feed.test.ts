import { describe, expect, it } from "vitest";
import { planCommitChanges, tableChanges } from "../../../shared/delta/read/change-data-feed.ts";
import {
  ChangeDataNotRecordedError,
  ChangeFeedSchemaChangeError,
  VersionNotFoundError,
} from "../../../shared/delta/errors.ts";
import type { ChangeFile } from "../../../shared/delta/read/change-data-feed.ts";
import { MemoryObjectStore } from "../../../shared/object-store/memory-object-store.ts";
import {
  add,
  commitInfo,
  metaData,
  protocol,
  remove,
  SCHEMA,
  tableWithCommits,
  writeCommit,
} from "./table-fixture.ts";

const cdc = (path: string) => ({ cdc: { path, partitionValues: { p: "1" }, size: 1, dataChange: false } });

describe("change data feed plan (PROTOCOL.md Reader Requirements for AddCDCFile)", () => {
  it("reads only the cdc files of a commit that has them", () => {
    const files = planCommitChanges(3, 99, [
      commitInfo(99),
      add("a"),
      remove("b"),
      cdc("_change_data/c1"),
      cdc("_change_data/c2"),
    ]);
    expect(files).toEqual([
      {
        version: 3,
        timestamp: 99,
        path: "_change_data/c1",
        partitionValues: { p: "1" },
        changeType: undefined,
      },
      {
        version: 3,
        timestamp: 99,
        path: "_change_data/c2",
        partitionValues: { p: "1" },
        changeType: undefined,
      },
    ]);
  });

  it("otherwise reads adds as inserts and removes as deletes, skipping dataChange=false", () => {
    const files = planCommitChanges(1, 5, [
      commitInfo(5, { operation: "WRITE", operationParameters: { mode: "Overwrite" } }),
      add("a", { partitionValues: { p: "x" } }),
      remove("b", { partitionValues: { p: "y" } }),
      remove("c"),
      add("d", { dataChange: false }),
      remove("e", { dataChange: false }),
    ]);
    expect((files as ChangeFile[]).map((f) => [f.path, f.changeType, f.partitionValues])).toEqual([
      ["a", "insert", { p: "x" }],
      ["b", "delete", { p: "y" }],
      ["c", "delete", {}],
    ]);
  });

  it("refuses a DELETE, UPDATE or MERGE that rewrote files without cdc files: the rows it kept did not change", () => {
    for (const operation of ["DELETE", "UPDATE", "MERGE"]) {
      const refused = planCommitChanges(4, 9, [commitInfo(9, { operation }), remove("old"), add("kept")]);
      expect(refused).toBeInstanceOf(ChangeDataNotRecordedError);
      expect(refused).toMatchObject({
        errorCode: "DELTA_MISSING_CHANGE_DATA",
        data: { version: 4, operation },
      });
      // With its change rows recorded, or removing whole files only, the commit reads.
      expect(
        planCommitChanges(4, 9, [
          commitInfo(9, { operation }),
          remove("old"),
          add("kept"),
          cdc("_change_data/c"),
        ]),
      ).toHaveLength(1);
      expect(planCommitChanges(4, 9, [commitInfo(9, { operation }), remove("old")])).toEqual([
        { version: 4, timestamp: 9, path: "old", partitionValues: {}, changeType: "delete" },
      ]);
    }
    // A RESTORE or an overwrite does delete and insert what it removes and adds.
    for (const operation of ["RESTORE", "WRITE", "TRUNCATE"])
      expect(planCommitChanges(4, 9, [commitInfo(9, { operation }), remove("old"), add("new")])).toHaveLength(
        2,
      );
  });

  it("refuses a range across a rewrite whose changes were not recorded, naming the versions on either side", async () => {
    const store = new MemoryObjectStore(() => 1_000);
    await writeCommit(store, 0, [commitInfo(1_000), protocol(), metaData(), add("f0")]);
    await writeCommit(store, 1, [commitInfo(1_001), add("f1")]);
    await writeCommit(store, 2, [commitInfo(1_002, { operation: "DELETE" }), remove("f1"), add("f1-kept")]);
    await writeCommit(store, 3, [commitInfo(1_003), add("f3")]);
    const refused = await tableChanges(store, 1, 3).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(ChangeDataNotRecordedError);
    expect((refused as Error).message).toBe(
      "change data was not recorded for version 2: its DELETE rewrote data files without change data files " +
        "(delta.enableChangeDataFeed was not true), so the rows it kept would read as deleted and inserted again. " +
        "Read the change feed up to version 1 or from version 3; to record the changes of later DELETE, UPDATE and MERGE commits, " +
        "set the table property delta.enableChangeDataFeed = true (a dataset's properties in its pipeline)",
    );
    expect((refused as ChangeDataNotRecordedError).forTable("main.s.t").message).toMatch(
      /^table main\.s\.t: change data was not recorded for version 2/,
    );
  });

  it("refuses a range outside the log", async () => {
    const store = await tableWithCommits(3);
    await expect(tableChanges(store, 1, 5)).rejects.toThrow(VersionNotFoundError);
    await expect(tableChanges(store, 4)).rejects.toThrow(/versions 0 to 2/);
  });

  it("refuses a range across a schema change that is not additive, naming the ranges that can be read", async () => {
    // 0: create; 1: a column added; 2: a write; 3: a RESTORE to before the column; 4: a write.
    const store = new MemoryObjectStore(() => 1_000);
    const fields = JSON.parse(SCHEMA).fields as unknown[];
    const withExtra = JSON.stringify({
      type: "struct",
      fields: [...fields, { name: "extra", type: "string", nullable: true, metadata: {} }],
    });
    const commits = [
      [protocol(), metaData()],
      [metaData({ schemaString: withExtra })],
      [],
      [metaData(), remove("f1"), remove("f2")],
      [],
    ];
    for (const [v, actions] of commits.entries())
      await writeCommit(store, v, [commitInfo(1_000 + v), ...actions, add(`f${v}`)]);
    const refused = await tableChanges(store, 1, 4).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(ChangeFeedSchemaChangeError);
    expect(refused).toMatchObject({
      errorCode: "DELTA_CHANGE_DATA_FEED_INCOMPATIBLE_SCHEMA_CHANGE",
      data: {
        fromVersion: 1,
        toVersion: 4,
        ranges: [
          [1, 2],
          [3, 4],
        ],
      },
    });
    expect((refused as Error).message).toBe(
      "the change data feed of versions 1 to 4 cannot be read in one schema: it crosses a schema change that is not additive at version 3 " +
        "(column extra is dropped, from version 2's schema to version 4's). " +
        "Read versions 1 to 2 and 3 to 4 separately: each range reads in its last version's schema",
    );
    expect((refused as ChangeFeedSchemaChangeError).forTable("main.s.t").message).toMatch(
      /^table main\.s\.t: the change data feed of versions 1 to 4 cannot/,
    );
    // The start's schema comes from its snapshot when its commit has no metaData.
    await expect(tableChanges(store, 2, 4)).rejects.toMatchObject({
      data: {
        ranges: [
          [2, 2],
          [3, 4],
        ],
      },
    });
  });
});
