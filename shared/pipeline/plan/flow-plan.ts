import type { AutoCdcFlowPlan } from "./auto-cdc-flow-plan.ts";
import type { DedupFlowPlan } from "./dedup-flow-plan.ts";
import type { JoinFlowPlan } from "./join-flow-plan.ts";
import type { PlainFlowPlan } from "./plain-flow-plan.ts";
import type { WindowedFlowPlan } from "./windowed-flow-plan.ts";

/** What a flow does to each micro-batch, compiled once from its definition (plain data, JSON-able). */
export type FlowPlan = PlainFlowPlan | DedupFlowPlan | WindowedFlowPlan | JoinFlowPlan | AutoCdcFlowPlan;
