import type { PipelineSettings } from "../pipeline/pipeline-settings.ts";
import type { BeginUpdateResult, PipelineRecord } from "../store/pipelines-repository.ts";
import { PipelineBusyError, RewindIncompleteError } from "./errors.ts";

/**
 * Whether an update may start (semantics.md "Rewind request" and "Doing the rewind"), checked
 * synchronously in start-update. Pure.
 *
 * - Another update holds the pipeline: `PIPELINE_BUSY` (409).
 * - A rewind failed part-way: every non-rewind update (a full refresh included) is refused with
 *   `PIPELINE_REWIND_INCOMPLETE` (409), unless `pipelines.allowUpdateAfterIncompleteRewind` is on. A
 *   rewind is always allowed: rewinding again is how the pipeline converges.
 */
export function checkUpdateAllowed(
  pipeline: Pick<PipelineRecord, "activeUpdateId" | "rewindBlocked" | "rewindBlockedBy">,
  settings: Pick<PipelineSettings, "allowUpdateAfterIncompleteRewind">,
  kind: "rewind" | "other",
): void {
  if (pipeline.activeUpdateId !== undefined) throw new PipelineBusyError(pipeline.activeUpdateId);
  if (pipeline.rewindBlocked && kind === "other" && !settings.allowUpdateAfterIncompleteRewind) {
    throw new RewindIncompleteError(pipeline.rewindBlockedBy ?? "(unknown)");
  }
}

/** The repository's busy result as the API error. */
export function assertBegun(result: BeginUpdateResult): PipelineRecord {
  if (result.outcome === "pipeline-busy") throw new PipelineBusyError(result.activeUpdateId);
  return result.pipeline;
}
