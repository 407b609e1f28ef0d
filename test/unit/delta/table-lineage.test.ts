import { describe, expect, it } from "vitest";
import { restoredVersion, walkLineage } from "../../../shared/delta/index.ts";

describe("a table version's lineage", () => {
  // 0 1 2 3 4:RESTORE(1) 5 6:RESTORE(5) 7
  const restores = new Map([
    [4, 1],
    [6, 5],
  ]);
  const restoredAt = (version: number) => restores.get(version);

  it("jumps from each RESTORE to the version it restored", () => {
    expect(walkLineage(7, -1, restoredAt)).toEqual({
      live: [0, 1, 5, 7],
      restores: [
        { version: 4, restoredVersion: 1 },
        { version: 6, restoredVersion: 5 },
      ],
    });
    expect(walkLineage(3, -1, restoredAt).live).toEqual([0, 1, 2, 3]);
  });

  it("stops at the floor; a jump below it is the walk's first restore", () => {
    expect(walkLineage(7, 2, restoredAt)).toEqual({
      live: [5, 7],
      restores: [
        { version: 4, restoredVersion: 1 },
        { version: 6, restoredVersion: 5 },
      ],
    });
  });

  it("reads the restored version from a RESTORE's commit info only", () => {
    expect(restoredVersion({ operation: "RESTORE", operationParameters: { version: "3" } })).toBe(3);
    expect(restoredVersion({ operation: "WRITE", operationParameters: { version: "3" } })).toBeUndefined();
    expect(
      restoredVersion({ operation: "RESTORE", operationParameters: { timestamp: "x" } }),
    ).toBeUndefined();
  });
});
