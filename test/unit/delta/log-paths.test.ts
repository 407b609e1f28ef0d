import { describe, expect, it } from "vitest";
import {
  checkpointKey,
  checkpointKeys,
  commitKey,
  LAST_CHECKPOINT_KEY,
  multiPartCheckpointKey,
  padVersion,
  parseLogKey,
} from "../../../shared/delta/log/log-paths.ts";

describe("log paths", () => {
  it("names commits and checkpoints with 20-digit versions", () => {
    expect(commitKey(0)).toBe("_delta_log/00000000000000000000.json");
    expect(commitKey(42)).toBe("_delta_log/00000000000000000042.json");
    expect(checkpointKey(10)).toBe("_delta_log/00000000000000000010.checkpoint.parquet");
    expect(multiPartCheckpointKey(10, 2, 3)).toBe(
      "_delta_log/00000000000000000010.checkpoint.0000000002.0000000003.parquet",
    );
    expect(checkpointKeys(10, 1)).toEqual([checkpointKey(10)]);
    expect(checkpointKeys(10, 2)).toEqual([
      multiPartCheckpointKey(10, 1, 2),
      multiPartCheckpointKey(10, 2, 2),
    ]);
    expect(LAST_CHECKPOINT_KEY).toBe("_delta_log/_last_checkpoint");
  });

  it("refuses versions that cannot name a file", () => {
    expect(() => padVersion(-1)).toThrow(RangeError);
    expect(() => padVersion(1.5)).toThrow(RangeError);
  });

  it("parses every kind of log file and round-trips the names it makes", () => {
    expect(parseLogKey(commitKey(7))).toEqual({ kind: "commit", version: 7 });
    expect(parseLogKey("00000000000000000007.json")).toEqual({ kind: "commit", version: 7 });
    expect(parseLogKey(checkpointKey(10))).toEqual({ kind: "checkpoint", version: 10 });
    expect(parseLogKey(multiPartCheckpointKey(10, 2, 3))).toEqual({
      kind: "checkpoint-part",
      version: 10,
      part: 2,
      parts: 3,
    });
    expect(
      parseLogKey("_delta_log/00000000000000000010.checkpoint.80a083e8-7026-4e79-81be-64bd76c43a11.json"),
    ).toEqual({ kind: "uuid-checkpoint", version: 10, format: "json" });
    expect(parseLogKey("_delta_log/00000000000000000004.00000000000000000006.compacted.json")).toEqual({
      kind: "compaction",
      version: 4,
      endVersion: 6,
    });
    expect(parseLogKey("_delta_log/00000000000000000003.crc")).toEqual({ kind: "checksum", version: 3 });
    expect(parseLogKey(LAST_CHECKPOINT_KEY)).toEqual({ kind: "last-checkpoint" });
  });

  it("ignores files that are not part of the log", () => {
    for (const key of [
      "_delta_log/.00000000000000000000.json.crc",
      "_delta_log/0000000000000000000.json",
      "_delta_log/00000000000000000000.json.tmp",
      "_delta_log/_staged_commits/00000000000000000000.3a0d65cd-4056-49b8-937b-95f9e3ee90e5.json",
      "_delta_log/_sidecars/3a0d65cd.parquet",
      "part-00000.parquet",
    ]) {
      expect(parseLogKey(key), key).toBeUndefined();
    }
  });
});
