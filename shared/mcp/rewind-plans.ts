import { randomUUID } from "node:crypto";
import type { RewindPreview, RewindSpecBody } from "../client/rewind-preview.ts";

/**
 * The rewind plans an MCP session made: a rewind runs only a plan this session's `plan_rewind`
 * showed, exactly as shown (the same spec the dry run rehearsed), and each plan runs once.
 */

export interface RewindPlan {
  readonly planId: string;
  readonly pipelineId: string;
  readonly spec: RewindSpecBody;
  readonly preview: RewindPreview;
}

export class RewindPlans {
  readonly #plans = new Map<string, RewindPlan>();

  add(pipelineId: string, spec: RewindSpecBody, preview: RewindPreview): RewindPlan {
    const plan = { planId: `plan-${randomUUID()}`, pipelineId, spec, preview };
    this.#plans.set(plan.planId, plan);
    return plan;
  }

  get(planId: string): RewindPlan | undefined {
    return this.#plans.get(planId);
  }

  /** A plan that ran is spent: rewinding again needs a new plan of the pipeline as it then is. */
  spend(planId: string): void {
    this.#plans.delete(planId);
  }
}
