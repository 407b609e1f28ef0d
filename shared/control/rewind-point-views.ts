import { captureRewindPoint, listRewindPoints } from "../rewind/rewind-points.ts";
import type { RewindPoint } from "../rewind/rewind-point.ts";
import { InvalidStateError } from "../api/errors.ts";
import { CONFIGURATION_KEYS } from "../pipeline/pipeline-settings.ts";
import { loadPipeline, requirePipeline, rewindEnvironment, type ControlPlane } from "./control-plane.ts";

/**
 * Rewind points through the API (api.md "Rewind helpers"): the live ones newest first with what each
 * restores, and a capture on demand (the same capture the hourly schedule makes).
 */

export function rewindPointView(point: RewindPoint, catalog: string, schema: string) {
  return {
    rewind_point_id: point.rewindPointId,
    timestamp: new Date(point.time).toISOString(),
    message: point.message,
    expires_at: new Date(point.expiresAt).toISOString(),
    datasets: [...point.cut.datasets].map(([dataset, at]) => ({
      identifier: `${catalog}.${schema}.${dataset}`,
      table_version: at.version,
    })),
    flows: [...point.cut.flows].map(([flow, seq]) => ({ flow, checkpoint_seq: seq })),
  };
}

export async function listPoints(plane: ControlPlane, pipelineId: string) {
  await requirePipeline(plane, pipelineId);
  const { pipeline } = await loadPipeline(plane, pipelineId);
  const points = await listRewindPoints(rewindEnvironment(plane, pipelineId, pipeline));
  const { catalog, schema } = pipeline.definition;
  return { rewind_points: points.map((point) => rewindPointView(point, catalog, schema)) };
}

export async function capturePoint(plane: ControlPlane, pipelineId: string) {
  await requirePipeline(plane, pipelineId);
  const { pipeline } = await loadPipeline(plane, pipelineId);
  if (!pipeline.settings.rewindEnabled) {
    throw new InvalidStateError(
      `rewind is not enabled for this pipeline: set the configuration ${CONFIGURATION_KEYS.rewindEnabled} = "true" and run it once`,
    );
  }
  const point = await captureRewindPoint(rewindEnvironment(plane, pipelineId, pipeline), "periodic");
  if (!point) {
    throw new InvalidStateError(
      "the pipeline has no tables yet, so there is nothing to capture: run an update first",
    );
  }
  return rewindPointView(point, pipeline.definition.catalog, pipeline.definition.schema);
}

/** The hourly schedule: a point for every rewind-enabled pipeline that has tables. */
export async function captureAllPoints(
  plane: ControlPlane,
): Promise<{ captured: string[]; failed: string[] }> {
  const captured: string[] = [];
  const failed: string[] = [];
  for (const record of await plane.pipelines.list()) {
    if (record.state === "DELETED") continue;
    try {
      const { pipeline } = await loadPipeline(plane, record.pipelineId);
      if (!pipeline.settings.rewindEnabled) continue;
      const point = await captureRewindPoint(
        rewindEnvironment(plane, record.pipelineId, pipeline),
        "periodic",
      );
      if (point) captured.push(point.rewindPointId);
    } catch (error) {
      // One pipeline's failure must not cost the others their point; the handler logs it.
      failed.push(record.pipelineId);
      console.error(
        JSON.stringify({
          message: "rewind point capture failed",
          pipelineId: record.pipelineId,
          error: String(error),
        }),
      );
    }
  }
  return { captured, failed };
}
