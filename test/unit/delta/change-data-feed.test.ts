import { describe, expect, it } from "vitest";
import { planCommitChanges, tableChanges } from "../../../shared/delta/read/change-data-feed.ts";
import { VersionNotFoundError } from "../../../shared/delta/errors.ts";
import { add, commitInfo, remove, tableWithCommits } from "./table-fixture.ts";

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
      add("a", { partitionValues: { p: "x" } }),
      remove("b", { partitionValues: { p: "y" } }),
      remove("c"),
      add("d", { dataChange: false }),
      remove("e", { dataChange: false }),
    ]);
    expect(files.map((f) => [f.path, f.changeType, f.partitionValues])).toEqual([
      ["a", "insert", { p: "x" }],
      ["b", "delete", { p: "y" }],
      ["c", "delete", {}],
    ]);
  });

  it("refuses a range outside the log", async () => {
    const store = await tableWithCommits(3);
    await expect(tableChanges(store, 1, 5)).rejects.toThrow(VersionNotFoundError);
    await expect(tableChanges(store, 4)).rejects.toThrow(/versions 0 to 2/);
  });
});
