import { RewindPointNotFoundError } from "./errors.ts";
import { captureCut } from "./pipeline-cut.ts";
import type { RewindEnvironment } from "./rewind-environment.ts";
import { appendEvent, EVENT_TYPES, eventsOfType } from "./rewind-events.ts";
import { readRewindPoint, rewindSummaryEvent, type PipelineCut, type RewindPoint } from "./rewind-point.ts";

/**
 * Capturing and finding rewind points (semantics.md "Rewind points"). A point lives as long as the
 * pipeline's rewind retention (`pipelines.rewind.retention`, 7 days by default) through the
 * event's TTL. Every read also drops points older than the retention in force now, so a point is
 * invisible everywhere once it has expired, whether or not the TTL has deleted it yet, and a
 * retention shortened later applies to points captured before.
 */

/** Records `cut` as a rewind point (a `rewind_summary` with `dry_run: true`). */
export async function recordRewindPoint(
  env: RewindEnvironment,
  cut: PipelineCut,
  kind: "periodic" | "update-end" | "dry-run",
  updateId?: string,
): Promise<RewindPoint> {
  const retentionMs = env.pipeline.settings.rewindRetentionMs;
  const event = await appendEvent(
    env,
    rewindSummaryEvent({
      catalog: env.pipeline.definition.catalog,
      schema: env.pipeline.definition.schema,
      kind,
      cut,
      now: env.clock(),
      retentionMs,
      ...(updateId !== undefined ? { updateId } : {}),
    }),
  );
  return readRewindPoint(event, retentionMs) as RewindPoint;
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
  const retentionMs = env.pipeline.settings.rewindRetentionMs;
  const now = env.clock();
  const events = await eventsOfType(env.events, env.pipelineId, EVENT_TYPES.rewindSummary);
  return events
    .map((event) => readRewindPoint(event, retentionMs))
    .filter((point): point is RewindPoint => point !== undefined && point.expiresAt > now)
    .sort((a, b) => b.time - a.time || (a.rewindPointId < b.rewindPointId ? 1 : -1));
}

/** The live point with this id, or `REWIND_POINT_NOT_FOUND`. */
export async function findRewindPoint(env: RewindEnvironment, rewindPointId: string): Promise<RewindPoint> {
  const event = await env.events.get(env.pipelineId, rewindPointId);
  const point = event && readRewindPoint(event, env.pipeline.settings.rewindRetentionMs);
  if (!point || point.expiresAt <= env.clock()) throw new RewindPointNotFoundError(rewindPointId);
  return point;
}
