import { ResourceNotFoundError } from "../../api/errors.ts";
import { requirePipeline, type ControlPlane } from "../plane/control-plane.ts";
import { flowProgress, updateInfo } from "./update-views.ts";

/** Reading updates (api.md "Updates"): one with its progress, or a page newest first. */

/** Flow events read per update for its progress. */
const PROGRESS_EVENTS_READ = 1000;

export async function getUpdate(plane: ControlPlane, pipelineId: string, updateId: string) {
  const update = await plane.updates.get(pipelineId, updateId);
  if (!update) {
    await requirePipeline(plane, pipelineId);
    throw new ResourceNotFoundError(`pipeline ${pipelineId} has no update ${updateId}`);
  }
  const events = await plane.events.query(
    pipelineId,
    { eventType: "flow_progress", updateId, order: "asc", range: { atOrAfter: update.createdAt } },
    { limit: PROGRESS_EVENTS_READ },
  );
  return { update: updateInfo(update, flowProgress(events.items)) };
}

export async function listUpdates(
  plane: ControlPlane,
  pipelineId: string,
  page: { readonly max_results?: number; readonly page_token?: string },
) {
  await requirePipeline(plane, pipelineId);
  const listed = await plane.updates.list(pipelineId, {
    limit: page.max_results ?? 25,
    ...(page.page_token !== undefined ? { pageToken: page.page_token } : {}),
  });
  return {
    updates: listed.items.map((update) => updateInfo(update)),
    ...(listed.nextPageToken ? { next_page_token: listed.nextPageToken } : {}),
    ...(listed.prevPageToken ? { prev_page_token: listed.prevPageToken } : {}),
  };
}
