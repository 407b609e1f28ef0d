import { describe, expect, it } from "vitest";
import {
  UpstreamChangedError,
  UpstreamRefreshedError,
  UpstreamRewoundError,
} from "../../../shared/engine/errors.ts";
import type { TableOffset } from "../../../shared/engine/source-offsets.ts";
import {
  planChangeFeedBatch,
  planTableBatch,
  type SourceCommit,
} from "../../../shared/engine/table-stream-plan.ts";

/** A log: `append(rows...)` adds one file per number (100 bytes a row); `restore(t)` a RESTORE of version t. */
type Step = { append: number[] } | { restore: number } | { delete: true } | { truncate: true };

function log(steps: Step[]): SourceCommit[] {
  return steps.map((step, version) => {
    const base = {
      version,
      timestamp: 1000 + version,
      addedFiles: [] as { path: string; rows: number; bytes: number }[],
      removesData: false,
      changes: [
        {
          version,
          timestamp: 1000 + version,
          path: `v${version}-cdc`,
          partitionValues: {},
          changeType: undefined,
        },
      ],
    };
    if ("append" in step) {
      const addedFiles = step.append.map((rows, i) => ({
        path: `v${version}-f${i}`,
        rows,
        bytes: rows * 100,
      }));
      return {
        ...base,
        operation: "WRITE",
        addedFiles,
        changes: addedFiles.map((f) => ({
          ...base.changes[0]!,
          path: f.path,
          changeType: "insert" as const,
        })),
      };
    }
    if ("restore" in step)
      return { ...base, operation: "RESTORE", restoredVersion: step.restore, removesData: true };
    if ("truncate" in step) return { ...base, operation: "TRUNCATE", removesData: true };
    return { ...base, operation: "DELETE", removesData: true };
  });
}

const context = (commits: SourceCommit[]) => ({
  flow: "reader",
  upstream: "orders",
  tableId: "table-1",
  latestVersion: commits.length - 1,
});
const at = (nextVersion: number, rowsRead = 0): TableOffset => ({
  kind: "table",
  tableId: "table-1",
  nextVersion,
  rowsRead,
});
const versionsRead = (commits: SourceCommit[], start: TableOffset) => [
  ...new Set(
    planTableBatch(context(commits), start, commits.slice(start.nextVersion), {}).slices.map(
      (s) => s.version,
    ),
  ),
];

describe("planning a table stream batch", () => {
  it("reads every appended row from the start, and ends past the latest version", () => {
    const commits = log([{ append: [] }, { append: [3, 2] }, { append: [4] }]);
    const plan = planTableBatch(context(commits), at(0), commits, {});
    expect(plan.rows).toBe(9);
    expect(plan.end).toEqual(at(3));
    expect(plan.newestCommitTimestamp).toBe(1002);
  });

  it("splits a version at a row bound and resumes inside it", () => {
    const commits = log([{ append: [] }, { append: [3, 2] }, { append: [4] }]);
    const first = planTableBatch(context(commits), at(0), commits, { maxRows: 4 });
    expect(first.slices).toEqual([
      { version: 1, path: "v1-f0", firstRow: 0, endRow: 3, fileRows: 3, fileBytes: 300, versionRowStart: 0 },
      { version: 1, path: "v1-f1", firstRow: 0, endRow: 1, fileRows: 2, fileBytes: 200, versionRowStart: 3 },
    ]);
    expect(first.end).toEqual(at(1, 4));
    const second = planTableBatch(context(commits), first.end, commits.slice(1), { maxRows: 4 });
    expect(second.slices.map((s) => [s.version, s.path, s.firstRow, s.endRow])).toEqual([
      [1, "v1-f1", 1, 2],
      [2, "v2-f0", 0, 3],
    ]);
    expect(second.end).toEqual(at(2, 3));
  });

  it("bounds the files of a batch", () => {
    const commits = log([{ append: [1, 1, 1] }, { append: [1] }]);
    const plan = planTableBatch(context(commits), at(0), commits, { maxFiles: 2 });
    expect(plan.rows).toBe(2);
    expect(plan.end).toEqual(at(0, 2));
  });

  it("bounds the bytes of a batch's files, a larger file read alone, and says what it takes", () => {
    const commits = log([{ append: [1, 2, 1] }, { append: [9] }, { append: [1] }]);
    const first = planTableBatch(context(commits), at(0), commits, { maxBytes: 300 });
    expect(first.slices.map((s) => s.path)).toEqual(["v0-f0", "v0-f1"]);
    expect(first.size).toEqual({ files: 2, bytes: 300, records: 3 });
    const second = planTableBatch(context(commits), first.end, commits, { maxBytes: 300 });
    expect(second.slices.map((s) => s.path)).toEqual(["v0-f2"]);
    const alone = planTableBatch(context(commits), second.end, commits.slice(1), { maxBytes: 300 });
    expect(alone.slices.map((s) => s.path)).toEqual(["v1-f0"]);
    expect(alone.size).toEqual({ files: 1, bytes: 900, records: 9 });
  });

  it("re-plans a planned batch exactly, whatever was committed since", () => {
    const commits = log([{ append: [5] }, { append: [5] }, { append: [5] }]);
    const plan = planTableBatch(context(commits), at(0, 2), commits, { until: at(1, 3) });
    expect(plan.slices.map((s) => [s.version, s.firstRow, s.endRow])).toEqual([
      [0, 2, 5],
      [1, 0, 3],
    ]);
    expect(plan.end).toEqual(at(1, 3));
  });

  describe("the RESTORE skip rule (semantics.md)", () => {
    it("skips t+1 .. R for a reader at or before t", () => {
      // 1, 2 appended; 3, 4 abandoned; 5 restores 2; 6 appended after the rewind.
      const commits = log([
        { append: [] },
        { append: [1] },
        { append: [1] },
        { append: [1] },
        { append: [1] },
        { restore: 2 },
        { append: [1] },
      ]);
      expect(versionsRead(commits, at(0))).toEqual([1, 2, 6]);
      expect(versionsRead(commits, at(3))).toEqual([6]);
      const plan = planTableBatch(context(commits), at(3), commits.slice(3), {});
      expect(plan.skippedRestores).toEqual([{ version: 5, restoredVersion: 2 }]);
    });

    it("follows a second rewind to a version on the abandoned timeline", () => {
      // 5 restores 1 (abandoning 2..4); 7 restores 3 (back onto the abandoned timeline).
      const commits = log([
        { append: [] },
        { append: [1] },
        { append: [1] },
        { append: [1] },
        { append: [1] },
        { restore: 1 },
        { append: [1] },
        { restore: 3 },
      ]);
      expect(versionsRead(commits, at(0))).toEqual([1, 2, 3]);
    });

    it("fails a reader past t that was not rewound, naming the rewind", () => {
      const commits = log([
        { append: [] },
        { append: [1] },
        { append: [1] },
        { append: [1] },
        { restore: 1 },
      ]);
      const plan = () => planTableBatch(context(commits), at(3), commits.slice(3), {});
      expect(plan).toThrow(UpstreamRewoundError);
      expect(plan).toThrow(
        /upstream orders was rewound \(version 4 restored version 1\).*rewind this flow's dataset too.*or fully refresh it/,
      );
    });

    it("fails a reader that read part of an abandoned version", () => {
      const commits = log([{ append: [] }, { append: [2] }, { append: [2] }, { restore: 1 }]);
      expect(() => planTableBatch(context(commits), at(2, 1), commits.slice(2), {})).toThrow(
        UpstreamRewoundError,
      );
    });
  });

  it("fails on a table dropped and recreated, and on a TRUNCATE, saying to refresh the reader", () => {
    const commits = log([{ append: [1] }, { truncate: true }]);
    expect(() => planTableBatch(context(commits), at(1), commits.slice(1), {})).toThrow(
      UpstreamRefreshedError,
    );
    expect(() => planTableBatch(context(commits), at(1), commits.slice(1), {})).toThrow(
      /TRUNCATE.*fully refresh this flow's dataset too/,
    );
    const recreated = { ...context(commits), tableId: "table-2" };
    expect(() => planTableBatch(recreated, at(1), [], {})).toThrow(/DROP: the table was recreated/);
  });

  it("fails on any other commit that removes data", () => {
    const commits = log([{ append: [1] }, { delete: true }]);
    expect(() => planTableBatch(context(commits), at(1), commits.slice(1), {})).toThrow(UpstreamChangedError);
  });
});

describe("planChangeFeedBatch", () => {
  const start: TableOffset = { kind: "table", tableId: "table-1", nextVersion: 0, rowsRead: 0 };
  const paths = (plan: ReturnType<typeof planChangeFeedBatch>) => plan.changes!.map((c) => c.path);

  it("reads every live commit's change files, appends and deletes alike, in whole versions", () => {
    const commits = log([{ append: [2] }, { delete: true }, { append: [1, 1] }]);
    const all = planChangeFeedBatch(context(commits), start, commits, {});
    expect(paths(all)).toEqual(["v0-f0", "v1-cdc", "v2-f0", "v2-f1"]);
    expect(all.end).toEqual({ ...start, nextVersion: 3 });
    const bounded = planChangeFeedBatch(context(commits), start, commits, { maxFiles: 1 });
    expect(paths(bounded)).toEqual(["v0-f0"]);
    expect(bounded.end).toEqual({ ...start, nextVersion: 1 });
    const resumed = planChangeFeedBatch(context(commits), start, commits, { until: bounded.end });
    expect(paths(resumed)).toEqual(["v0-f0"]);
  });

  it("skips the versions a RESTORE abandoned, and refuses a TRUNCATE", () => {
    const commits = log([{ append: [1] }, { delete: true }, { restore: 0 }, { append: [1] }]);
    const after = { ...start, nextVersion: 1 };
    const plan = planChangeFeedBatch(context(commits), after, commits, {});
    expect(paths(plan)).toEqual(["v3-f0"]);
    expect(plan.skippedRestores).toEqual([{ version: 2, restoredVersion: 0 }]);
    const truncated = log([{ append: [1] }, { truncate: true }]);
    expect(() => planChangeFeedBatch(context(truncated), start, truncated, {})).toThrow(
      UpstreamRefreshedError,
    );
  });
});
