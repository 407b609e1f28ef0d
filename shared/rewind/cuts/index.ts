export { crossReads, dependencyOrder, type CrossRead, type PipelineTables } from "./pipeline-reads.ts";
export {
  planCut,
  type CutPlan,
  type CutPoint,
  type CutRequest,
  type CutStep,
  type CutTarget,
} from "./cut-plan.ts";
export {
  CutPipelineRefusedError,
  CutPointNotFoundError,
  NoPointInCutError,
  NotDownstreamOfCutError,
  PipelineCycleError,
  type NoPointReason,
} from "./errors.ts";
