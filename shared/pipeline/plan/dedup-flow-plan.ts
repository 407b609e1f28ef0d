import type { DedupStep, WatermarkStep } from "./stream-steps.ts";

/**
 * A flow that drops rows whose key any earlier batch (or this one) had, then runs its SQL over the
 * surviving rows. State: the keys seen (let go past the watermark when `withinWatermark`).
 */
export interface DedupFlowPlan {
  readonly kind: "dedup";
  readonly flow: string;
  readonly sql: string;
  readonly dedup: DedupStep;
  readonly watermark?: WatermarkStep;
}
