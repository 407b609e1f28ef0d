import { z } from "zod";
import type { ObjectStore } from "../../object-store/object-store.ts";
import { isBranchName } from "../../pipeline/branch-name.ts";
import { branchRecordKey } from "../../store/bucket-layout.ts";
import { BranchNotFoundError, InvalidBranchNameError } from "./errors.ts";

/**
 * A branch's record (docs/branches.md "What a branch holds"): written last by the branch's creation,
 * put-if-absent, so it exists only for a branch whose logs and checkpoints are all made. Parsed on
 * every read.
 */

export function checkBranchName(branch: string): string {
  if (!isBranchName(branch)) throw new InvalidBranchNameError(branch);
  return branch;
}

export const branchRecordSchema = z.object({
  name: z.string(),
  pipelineId: z.string(),
  /** Epoch ms. */
  createdAt: z.number(),
  rewindPointId: z.string().nullable(),
  /** The point's time, epoch ms. */
  pointTime: z.number(),
  tables: z.array(
    z.object({
      dataset: z.string(),
      identifier: z.string(),
      /** Live's version the branch began from; null: the table was empty at the point (or absent). */
      sourceVersion: z.number().int().nullable(),
      /** Live's latest version when the branch was made (null: no table); a publish needs it unchanged. */
      liveVersion: z.number().int().nullable().optional(),
      /** The branch began at the point (a rewound dataset), or at live as it was (one the rewind left). */
      from: z.enum(["POINT", "LIVE"]),
    }),
  ),
  flows: z.array(
    z.object({
      flow: z.string(),
      /** Live's checkpoint the branch's HEAD copies (0: the root). */
      liveSeq: z.number().int(),
      /** The copy's seq among the branch's checkpoints (0: the root). */
      branchSeq: z.number().int(),
    }),
  ),
});
export type BranchRecord = z.infer<typeof branchRecordSchema>;

export function encodeBranchRecord(record: BranchRecord): Uint8Array {
  return new TextEncoder().encode(JSON.stringify(record));
}

/** The branch's record, or `BRANCH_NOT_FOUND`. */
export async function readBranchRecord(
  bucket: ObjectStore,
  pipelineId: string,
  branch: string,
): Promise<BranchRecord> {
  const key = branchRecordKey(pipelineId, checkBranchName(branch));
  if (!(await bucket.head(key))) throw new BranchNotFoundError(pipelineId, branch);
  return branchRecordSchema.parse(JSON.parse(new TextDecoder().decode(await bucket.get(key))));
}
