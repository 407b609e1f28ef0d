import type { WatermarkStep } from "./stream-steps.ts";

/**
 * A flow whose SQL runs over each micro-batch as it is (`source`), appending its rows. With a
 * watermark it keeps only that (late rows are dropped); without one it keeps no state.
 */
export interface PlainFlowPlan {
  readonly kind: "plain";
  readonly flow: string;
  /** The flow's SQL over `source`, as the user wrote it. */
  readonly sql: string;
  readonly watermark?: WatermarkStep;
}
