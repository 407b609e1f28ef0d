import { httpStatusOf, type CodedError } from "../../errors/coded-error.ts";
import { RewindError } from "../errors.ts";

/**
 * Errors of a rewind across pipelines (docs/rewind-across-pipelines.md). Each is raised while
 * planning, before any pipeline is changed, and names the pipeline and the way out.
 */
const CUT = "INVALID_CUT_SPECIFICATION";

/** The pipelines read each other's tables in a circle: there is no order to rewind them in. */
export class PipelineCycleError extends RewindError {
  override readonly name = "PipelineCycleError";
  override readonly errorCode = `${CUT}.PIPELINE_CYCLE`;
  constructor(readonly pipelines: readonly string[]) {
    super(
      `pipelines ${pipelines.map((p) => JSON.stringify(p)).join(", ")} read each other's tables in a cycle: a cut needs an upstream to start from; rewind them one by one instead`,
      { data: { pipelines } },
    );
  }
}

/** The cut's upstream point is not a live point of the first pipeline. */
export class CutPointNotFoundError extends RewindError {
  override readonly name = "CutPointNotFoundError";
  override readonly errorCode = `${CUT}.REWIND_POINT_NOT_FOUND`;
  constructor(
    readonly pipeline: string,
    readonly rewindPointId: string,
    /** As users address it (the message's); `pipeline` stays the id. */
    label = pipeline,
  ) {
    super(
      `rewind point ${JSON.stringify(rewindPointId)} is not a live rewind point of pipeline ${JSON.stringify(label)}, the cut's upstream: list its points with GET /api/2.0/pipelines/{id}/rewind-points, or cut by rewind_timestamp`,
      { data: { pipeline, rewindPointId } },
    );
  }
}

/** Why one pipeline has no point in the cut. */
export type NoPointReason = "none-before-time" | "reads-past-cut";

/** A pipeline has no live point inside the cut: the whole request is refused. */
export class NoPointInCutError extends RewindError {
  override readonly name = "NoPointInCutError";
  override readonly errorCode = `${CUT}.NO_POINT_IN_CUT`;
  constructor(
    readonly pipeline: string,
    readonly reason: NoPointReason,
    /** As users address it (the message's); `pipeline` stays the id. */
    label = pipeline,
  ) {
    super(
      reason === "none-before-time"
        ? `pipeline ${JSON.stringify(label)} has no live rewind point at or before the cut's time: nothing was rewound; cut at a later time, or capture a point now (POST /api/2.0/pipelines/{id}/rewind-points) before the next bad deploy`
        : `every live rewind point of pipeline ${JSON.stringify(label)} read an upstream table past the cut, so its rows would depend on upstream rows the rewind removes: nothing was rewound; cut later, or rewind ${JSON.stringify(label)} with a full refresh after the others`,
      { data: { pipeline, reason } },
    );
  }
}

/** Cut by one pipeline's point, another pipeline of the request does not read from it. */
export class NotDownstreamOfCutError extends RewindError {
  override readonly name = "NotDownstreamOfCutError";
  override readonly errorCode = `${CUT}.NOT_DOWNSTREAM`;
  constructor(
    readonly pipeline: string,
    readonly upstream: string,
    /** As users address them (the message's); the fields stay ids. */
    labels: { pipeline: string; upstream: string } = { pipeline, upstream },
  ) {
    super(
      `pipeline ${JSON.stringify(labels.pipeline)} reads no table of ${JSON.stringify(labels.upstream)} (directly or through the request's other pipelines), so a point of ${JSON.stringify(labels.upstream)} does not place it: nothing was rewound; leave it out, or cut by rewind_timestamp`,
      { data: { pipeline, upstream } },
    );
  }
}

/** One pipeline's rewind to its point in the cut would be refused: so is the whole request. */
export class CutPipelineRefusedError extends RewindError {
  override readonly name = "CutPipelineRefusedError";
  override readonly errorCode: string;
  override readonly httpStatus: 400 | 409;
  constructor(
    readonly pipelineName: string,
    readonly pipelineId: string,
    cause: CodedError,
  ) {
    super(
      `pipeline ${JSON.stringify(pipelineName)} (${pipelineId}) refuses its rewind in the cut, so no pipeline was rewound: ${cause.message}`,
      { cause, data: { pipeline_id: pipelineId, pipeline: pipelineName } },
    );
    // The pipeline's own code and status: the way out is the one its refusal names.
    this.errorCode = cause.errorCode;
    this.httpStatus = httpStatusOf(cause) === 409 ? 409 : 400;
  }
}
