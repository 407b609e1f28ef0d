import { RewindPointNotFoundError } from "./errors.ts";
import { captureCut } from "./pipeline-cut.ts";
import type { RewindEnvironment } from "./rewind-environment.ts";
import { EVENT_TYPES, liveEvents } from "./rewind-events.ts";
import { readRewindPoint, rewindSummaryEvent, type PipelineCut, type RewindPoint } from "./rewind-point.ts";

/**
 * Capturing and finding rewind points (semantics.md "Rewind points"). A point lives as long as the
 * pipeline's rewind retention (`pipelines.rewind.retentionDuration`, 7 days by default) through the
 * event's TTL, and every read filters expired points out, since the TTL deletes them lazily.
 */

/** Records `cut` as a rewind point (a `rewind_summary` with `dry_run: true`). */
export async function recordRewindPoint(
  env: RewindEnvironment,
  cut: PipelineCut,
  kind: "periodic" | "update-end" | "dry-run",
  updateId?: string,
): Promise<RewindPoint> {
  const now = env.clock();
  const event = await env.events.append(
    rewindSummaryEvent({
      pipelineId: env.pipelineId,
      catalog: env.pipeline.definition.catalog,
      schema: env.pipeline.definition.schema,
      kind,
      cut,
      now,
      retentionMs: env.pipeline.settings.rewindRetentionMs,
      ...(updateId !== undefined ? { updateId } : {}),
    }),
  );
  return readRewindPoint(event) as RewindPoint;
}

/**
 * Captures a point now (the hourly schedule: `periodic`; the end of a successful update:
 * `update-end`). A pipeline none of whose tables exists yet has nothing to rewind to: undefined.
 */
export async function captureRewindPoint(
  env: RewindEnvironment,
  kind: "periodic" | "update-end" = "periodic",
  updateId?: string,
): Promise<RewindPoint | undefined> {
  const cut = await captureCut(env);
  if (cut.datasets.size === 0) return undefined;
  return recordRewindPoint(env, cut, kind, updateId);
}

/** The live points, newest first, each with the datasets and versions it restores. */
export async function listRewindPoints(env: RewindEnvironment): Promise<RewindPoint[]> {
  const events = await liveEvents(env.events, env.pipelineId, EVENT_TYPES.rewindSummary, env.clock());
  return events
    .map(readRewindPoint)
    .filter((point): point is RewindPoint => point !== undefined)
    .sort((a, b) => b.time - a.time || (a.rewindPointId < b.rewindPointId ? 1 : -1));
}

/** The live point with this id, or `REWIND_POINT_NOT_FOUND`. */
export async function findRewindPoint(env: RewindEnvironment, rewindPointId: string): Promise<RewindPoint> {
  const point = (await listRewindPoints(env)).find((p) => p.rewindPointId === rewindPointId);
  if (!point) throw new RewindPointNotFoundError(rewindPointId);
  return point;
}
