import { captureRewindPoint, listRewindPoints } from "../../rewind/rewind-points.ts";
import { lastResets, refusedAsBeforeFullRefresh } from "../../rewind/full-refresh-record.ts";
import { tableDatasets } from "../../rewind/pipeline-datasets.ts";
import type { MissingPiece } from "../../rewind/errors.ts";
import { checkTable } from "../../rewind/rewind-checks.ts";
import type { RewindEnvironment } from "../../rewind/rewind-environment.ts";
import { withTableSnapshots, type TableSnapshots } from "../../rewind/table-snapshots.ts";
import type { RewindPoint } from "../../rewind/rewind-point.ts";
import { InvalidStateError } from "../../api/errors.ts";
import { CONFIGURATION_KEYS } from "../../pipeline/pipeline-settings.ts";
import { memoryPage } from "../../store/memory-pages.ts";
import {
  loadPipeline,
  requirePipeline,
  rewindEnvironment,
  type ControlPlane,
} from "../plane/control-plane.ts";

/**
 * Rewind points through the API (api.md "Rewind helpers"): the live ones newest first with what each
 * restores, and a capture on demand (the same capture the hourly schedule makes).
 */

/** Why a rewind of every dataset to a point would be refused, or nothing when it would not. */
export type Restorability =
  { readonly restorable: true } | { readonly restorable: false; readonly reason: string };

export function rewindPointView(
  point: RewindPoint,
  catalog: string,
  schema: string,
  restorability?: Restorability,
) {
  return {
    rewind_point_id: point.rewindPointId,
    timestamp: new Date(point.time).toISOString(),
    message: point.message,
    /** `periodic`, `update-end` or `dry-run` (a dry run's record of its target; the UI hides these). */
    kind: point.kind,
    expires_at: new Date(point.expiresAt).toISOString(),
    datasets: [...point.cut.datasets].map(([dataset, at]) => ({
      identifier: `${catalog}.${schema}.${dataset}`,
      table_version: at.version,
    })),
    flows: [...point.cut.flows].map(([flow, seq]) => ({ flow, checkpoint_seq: seq })),
    ...(restorability
      ? {
          restorable: restorability.restorable,
          ...(restorability.restorable ? {} : { not_restorable_reason: restorability.reason }),
        }
      : {}),
  };
}

/**
 * Whether a rewind of every dataset to a point would pass the checks the rewind makes on the point's
 * tables: none was fully refreshed since (the rewind's own rule, `refusedAsBeforeFullRefresh`), and
 * each table version it restores is still whole: in the log, with every data file the RESTORE would
 * bring back (a VACUUM outside Ebb, or log clean-up, can take them). Points share most of their
 * versions (an hourly point of an idle pipeline repeats the last one), so each table version is
 * checked once per listing, over one snapshot cache.
 */
class RestorabilityChecks {
  readonly #checked = new Map<string, Promise<MissingPiece[]>>();

  constructor(
    private readonly env: RewindEnvironment,
    private readonly snapshots: TableSnapshots,
    private readonly resets: ReadonlyMap<string, number>,
  ) {}

  async of(point: RewindPoint, catalog: string, schema: string): Promise<Restorability> {
    const refused = await refusedAsBeforeFullRefresh(
      this.env,
      this.snapshots,
      point.cut,
      tableDatasets(this.env.pipeline),
      this.resets,
    );
    if (refused) return { restorable: false, reason: `${refused.errorCode}: ${refused.message}` };
    const missing: MissingPiece[] = [];
    for (const [dataset, at] of point.cut.datasets)
      missing.push(...(await this.#version(dataset, at.version)));
    if (missing.length === 0) return { restorable: true };
    const reason = missing.map((piece) => `${catalog}.${schema}.${piece.owner}: ${piece.what}`).join("; ");
    return { restorable: false, reason };
  }

  #version(dataset: string, version: number): Promise<MissingPiece[]> {
    const key = `${dataset}@${version}`;
    let checked = this.#checked.get(key);
    if (!checked) {
      const missing: MissingPiece[] = [];
      checked = checkTable(this.env, this.snapshots, dataset, version, missing).then(() => missing);
      this.#checked.set(key, checked);
    }
    return checked;
  }
}

/** Points a page holds without `max_results`: 7 days of hourly points are ~170, each checked. */
const DEFAULT_PAGE = 100;

/** A point's place in the listing: newest first, then by id, as `listRewindPoints` orders them. */
const listingKey = (point: RewindPoint) => `${String(point.time).padStart(15, "0")}|${point.rewindPointId}`;

/**
 * `GET …/rewind-points`: a page of the live points, newest first, each with whether a rewind to it
 * would pass. Only the page's points are checked, so a long retention does not make the listing slow.
 */
export async function listPoints(
  plane: ControlPlane,
  pipelineId: string,
  request: { readonly max_results?: number; readonly page_token?: string } = {},
) {
  await requirePipeline(plane, pipelineId);
  const { pipeline } = await loadPipeline(plane, pipelineId);
  const env = rewindEnvironment(plane, pipelineId, pipeline);
  const page = memoryPage([...(await listRewindPoints(env))].reverse(), listingKey, {
    limit: request.max_results ?? DEFAULT_PAGE,
    order: "desc",
    scope: `rewind-points/${pipelineId}`,
    ...(request.page_token !== undefined ? { pageToken: request.page_token } : {}),
  });
  const { catalog, schema } = pipeline.definition;
  const resets = await lastResets(env);
  const views = await withTableSnapshots(env.tableStore, async (snapshots) => {
    const checks = new RestorabilityChecks(env, snapshots, resets);
    const listed = [];
    for (const point of page.items)
      listed.push(rewindPointView(point, catalog, schema, await checks.of(point, catalog, schema)));
    return listed;
  });
  return {
    rewind_points: views,
    ...(page.nextPageToken ? { next_page_token: page.nextPageToken } : {}),
    ...(page.prevPageToken ? { prev_page_token: page.prevPageToken } : {}),
  };
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
