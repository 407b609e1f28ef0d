import { describe, expect, it } from "vitest";
import { CorruptLogError, VersionNotFoundError } from "../../../shared/delta/errors.ts";
import { checkpointKey, commitKey, multiPartCheckpointKey } from "../../../shared/delta/log/log-paths.ts";
import {
  earliestReadableVersion,
  indexLogListing,
  latestListedVersion,
  planLogSegment,
} from "../../../shared/delta/log/log-segment.ts";
import type { ObjectInfo } from "../../../shared/object-store/object-store.ts";

const object = (key: string): ObjectInfo => ({ key, size: 1, lastModified: 1, etag: '"x"' });
const listing = (keys: string[]) => indexLogListing(keys.map(object));
const commits = (from: number, to: number) =>
  Array.from({ length: to - from + 1 }, (_, i) => commitKey(from + i));

describe("log segment", () => {
  it("replays every commit from 0 when there is no checkpoint", () => {
    const segment = planLogSegment(listing(commits(0, 3)));
    expect(segment.version).toBe(3);
    expect(segment.checkpoint).toBeUndefined();
    expect(segment.commits.map((c) => c.version)).toEqual([0, 1, 2, 3]);
  });

  it("starts from the newest checkpoint at or before the version", () => {
    const log = listing([...commits(0, 12), checkpointKey(5), checkpointKey(10)]);
    expect(planLogSegment(log).checkpoint?.version).toBe(10);
    expect(planLogSegment(log).commits.map((c) => c.version)).toEqual([11, 12]);
    const travel = planLogSegment(log, 7);
    expect(travel.checkpoint?.version).toBe(5);
    expect(travel.commits.map((c) => c.version)).toEqual([6, 7]);
    expect(planLogSegment(log, 10).commits).toEqual([]);
  });

  it("uses a multi-part checkpoint only when every part is there", () => {
    const complete = listing([
      ...commits(0, 4),
      multiPartCheckpointKey(2, 1, 2),
      multiPartCheckpointKey(2, 2, 2),
    ]);
    expect(planLogSegment(complete).checkpoint?.keys).toEqual([
      multiPartCheckpointKey(2, 1, 2),
      multiPartCheckpointKey(2, 2, 2),
    ]);
    const partial = listing([...commits(0, 4), multiPartCheckpointKey(2, 1, 2)]);
    expect(planLogSegment(partial).checkpoint).toBeUndefined();
  });

  it("reads a table whose early commits were cleaned up after a checkpoint", () => {
    const log = listing([...commits(5, 8), checkpointKey(5)]);
    expect(earliestReadableVersion(log)).toBe(5);
    expect(latestListedVersion(log)).toBe(8);
    expect(planLogSegment(log).commits.map((c) => c.version)).toEqual([6, 7, 8]);
    expect(() => planLogSegment(log, 4)).toThrow(VersionNotFoundError);
    expect(() => planLogSegment(log, 4)).toThrow(/versions 5 to 8 can be read/);
  });

  it("refuses a version after the latest", () => {
    expect(() => planLogSegment(listing(commits(0, 2)), 3)).toThrow(
      /version 3 is not in the table's history/,
    );
  });

  it("refuses a gap between the checkpoint and the version", () => {
    const log = listing([commitKey(0), commitKey(1), commitKey(3)]);
    expect(() => planLogSegment(log)).toThrow(CorruptLogError);
    expect(() => planLogSegment(log)).toThrow(/commit 2 is missing/);
    expect(planLogSegment(log, 1).version).toBe(1);
  });

  it("treats an empty listing as having no version", () => {
    expect(latestListedVersion(listing([]))).toBeUndefined();
    expect(() => planLogSegment(listing([]))).toThrow(VersionNotFoundError);
  });
});
