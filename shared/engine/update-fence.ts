import { fencedOut } from "./errors.ts";

/**
 * The fence every write of an update asks just before it lands (a batch's table commit, a view's
 * overwrite, a rewind's RESTORE, a reset): the update must still be the pipeline's active one and not
 * stopped, or the write is refused with `fencedOut`. Checkpoint writes carry the same condition
 * inside their DynamoDB transaction; a Delta commit is an S3 put, which cannot, so it asks first.
 */
export type UpdateFence = (refused: string) => Promise<void>;

export function updateFence(
  updateId: string,
  /** Whether `updateId` is still the pipeline's active update. */
  isActive: () => Promise<boolean>,
  /** Aborted once the update is stopped. */
  signal?: AbortSignal,
): UpdateFence {
  return async (refused) => {
    if (signal?.aborted || !(await isActive())) throw fencedOut(updateId, refused, {});
  };
}
