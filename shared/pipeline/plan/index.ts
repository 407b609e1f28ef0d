/**
 * Plans: what each flow and materialized view of a validated pipeline does, compiled once per
 * definition version and executed by an engine (DuckDB here). Plain data (JSON-able): each step
 * carries the SQL text it runs and the structure an executor needs (keys, window, watermark, join
 * range and condition, sequence columns), not parse trees or engine objects.
 */
export type { FlowPlan } from "./flow-plan.ts";
export type { PlainFlowPlan } from "./plain-flow-plan.ts";
export type { DedupFlowPlan } from "./dedup-flow-plan.ts";
export type { WindowedFlowPlan, WindowSpec } from "./windowed-flow-plan.ts";
export type { JoinFlowPlan } from "./join-flow-plan.ts";
export { JOIN_ROW, JOIN_SEQ } from "./join-flow-plan.ts";
export type { AutoCdcFlowPlan } from "./auto-cdc-flow-plan.ts";
export type { DedupStep, WatermarkStep } from "./stream-steps.ts";
export type { ViewPlan } from "./view-plan.ts";
export type { IncrementalViewPlan } from "./incremental-view-plan.ts";
export type { RecomputedViewPlan } from "./recomputed-view-plan.ts";
export * from "./aggregate-columns.ts";
export { describeJoinChange, describeWindowChange } from "./state-signatures.ts";
export { compilePipeline, type PipelinePlans } from "./compile-pipeline.ts";
export { autoCdcPlan } from "./compile-flow.ts";
export type { SqlCompiler } from "./sql-compiler.ts";
