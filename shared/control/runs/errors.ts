import { CodedError, httpStatusOf } from "../../errors/coded-error.ts";

/**
 * Refusals of an ordered run of several pipelines (docs/rewind-across-pipelines.md "Replaying in
 * order"). Each is raised before any pipeline starts and names the pipeline and the way out.
 */

/** The pipelines read each other's tables in a circle: there is no order to run them in. */
export class OrderedRunCycleError extends CodedError {
  override readonly name = "OrderedRunCycleError";
  override readonly errorCode = "INVALID_ORDERED_RUN.PIPELINE_CYCLE";
  override readonly httpStatus = 400;
  constructor(readonly pipelines: readonly string[]) {
    super(
      `pipelines ${pipelines.map((p) => JSON.stringify(p)).join(", ")} read each other's tables in a cycle, so no order runs each after its upstreams: run them one by one instead`,
      { data: { pipelines } },
    );
  }
}

/** One pipeline could not start now: so no pipeline of the ordered run starts. */
export class OrderedRunRefusedError extends CodedError {
  override readonly name = "OrderedRunRefusedError";
  override readonly errorCode: string;
  override readonly httpStatus: number;
  constructor(pipelineName: string, pipelineId: string, cause: CodedError) {
    super(
      `pipeline ${JSON.stringify(pipelineName)} (${pipelineId}) cannot start now, so no pipeline of the ordered run was started: ${cause.message}`,
      { cause, data: { pipeline_id: pipelineId, pipeline: pipelineName } },
    );
    // The pipeline's own code and status: the way out is the one its refusal names.
    this.errorCode = cause.errorCode;
    this.httpStatus = httpStatusOf(cause);
  }
}
