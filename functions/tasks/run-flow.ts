import { runItem, type RunInput } from "../../shared/control/updates/steps/run-step.ts";
import { taskHandler } from "./task-handler.ts";

/** Time kept back from the Lambda timeout for the batch in flight to commit. */
export const BATCH_MARGIN_MS = 120_000;
/** At least this much budget, so each invocation makes progress. */
const MIN_BUDGET_MS = 30_000;

/**
 * State `RunFlow` (inside the level Map): micro-batches until caught up or out of time, or until a
 * batch is handed to the state machine's Spark state (its answer's `sparkRequest`).
 */
export const handler = taskHandler((plane, item: RunInput, context) =>
  runItem(plane, item, Math.max(MIN_BUDGET_MS, context.getRemainingTimeInMillis() - BATCH_MARGIN_MS)),
);
