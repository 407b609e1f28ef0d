import { InjectedCrashError } from "./errors.ts";

/**
 * Test hook for crash injection: the micro-batch protocol calls the hook at each step boundary, and a
 * hook that throws stops the batch there, as a crashed Lambda would.
 */
export const CRASH_POINTS = [
  /** The checkpoint is PLANNED; nothing else is written. */
  "after-plan",
  /** The batch's operator state version is written (a stateful flow), nothing else of step 3 on. */
  "after-state-write",
  /** One data file of the batch is in the table folder, the rest not yet written; nothing committed. */
  "after-a-data-file",
  /** The batch's data files are in the table folder but not committed. */
  "after-data-files",
  /** The table commit (with the batch's txn) landed. */
  "after-table-commit",
  /** Everything but the checkpoint's COMMITTED mark and HEAD move is done. */
  "before-head-move",
] as const;
export type CrashPoint = (typeof CRASH_POINTS)[number];

export type CrashHook = (point: CrashPoint, seq: number) => void | Promise<void>;

/** A hook that crashes once, at `point` of the `nth` batch that reaches it (1-based). */
export function crashOnce(point: CrashPoint, nth = 1): CrashHook {
  let reached = 0;
  let fired = false;
  return (at) => {
    if (fired || at !== point) return;
    reached += 1;
    if (reached < nth) return;
    fired = true;
    throw new InjectedCrashError(point);
  };
}
