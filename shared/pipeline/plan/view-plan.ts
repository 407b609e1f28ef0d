import type { IncrementalViewPlan } from "./incremental-view-plan.ts";
import type { RecomputedViewPlan } from "./recomputed-view-plan.ts";

/** How a materialized view refreshes, compiled once from its definition (plain data, JSON-able). */
export type ViewPlan = IncrementalViewPlan | RecomputedViewPlan;
