import type { PipelineSettings } from "../pipeline/pipeline-settings.ts";
import type { BeginUpdateResult, PipelineRecord } from "../store/pipelines-repository.ts";
import { PipelineBusyError, RefreshIncompleteError, RewindIncompleteError } from "./errors.ts";

/**
 * Whether an update may start (semantics.md "Rewind request" and "Doing the rewind"), checked
 * synchronously in start-update. Pure.
 *
 * - Another update holds the pipeline: `PIPELINE_BUSY` (409).
 * - A rewind failed part-way: every non-rewind update (a full refresh included) is refused with
 *   `PIPELINE_REWIND_INCOMPLETE` (409), unless `pipelines.allowUpdateAfterIncompleteRewind` is on. A
 *   rewind is always allowed: rewinding again is how the pipeline converges.
 * - A refresh's resets were stopped part-way (`resetUnderWay`, semantics.md "Refresh and reset"): a
 *   non-rewind update whose own plan does not reset every one of those datasets (`resets`) is refused
 *   with `PIPELINE_REFRESH_INCOMPLETE` (409). A full refresh of them, or a rewind, converges.
 */
export function checkUpdateAllowed(
  pipeline: Pick<PipelineRecord, "activeUpdateId" | "rewindBlocked" | "rewindBlockedBy" | "resetUnderWay">,
  settings: Pick<PipelineSettings, "allowUpdateAfterIncompleteRewind">,
  kind: "rewind" | "other",
  resets: readonly string[] = [],
): void {
  if (pipeline.activeUpdateId !== undefined) throw new PipelineBusyError(pipeline.activeUpdateId);
  if (kind === "rewind") return;
  if (pipeline.rewindBlocked && !settings.allowUpdateAfterIncompleteRewind) {
    throw new RewindIncompleteError(pipeline.rewindBlockedBy ?? "(unknown)");
  }
  const stopped = pipeline.resetUnderWay;
  if (stopped && !stopped.datasets.every((dataset) => resets.includes(dataset))) {
    throw new RefreshIncompleteError(stopped.updateId, stopped.datasets);
  }
}

/** The repository's busy result as the API error. */
export function assertBegun(result: BeginUpdateResult): PipelineRecord {
  if (result.outcome === "pipeline-busy") throw new PipelineBusyError(result.activeUpdateId);
  return result.pipeline;
}
