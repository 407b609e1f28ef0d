import { randomUUID } from "node:crypto";
import type { CutRewindBody } from "../../api/request-schemas.ts";
import { consumedUpTo } from "../../engine/source-offsets.ts";
import { CodedError } from "../../errors/coded-error.ts";
import { tableOffsetOf } from "../../rewind/checkpoint-offsets.ts";
import {
  crossReads,
  CutPipelineRefusedError,
  planCut,
  type CutPlan,
  type CutPoint,
  type PipelineTables,
} from "../../rewind/cuts/index.ts";
import { flowRef, type RewindEnvironment } from "../../rewind/rewind-environment.ts";
import { planRewind, type RewindPlan } from "../../rewind/rewind-plan.ts";
import { listRewindPoints } from "../../rewind/rewind-points.ts";
import { parseRewindSpec } from "../../rewind/rewind-spec.ts";
import { checkUpdateAllowed } from "../../rewind/update-guard.ts";
import {
  loadPipeline,
  requirePipeline,
  rewindEnvironment,
  type ControlPlane,
} from "../plane/control-plane.ts";
import { plannedDatasetView } from "../updates/planned-dataset-view.ts";
import { startUpdate } from "../updates/start-update.ts";
import { pipelineTables } from "./pipeline-tables.ts";

/**
 * `POST /api/2.0/ebb/rewinds` (docs/rewind-across-pipelines.md): several pipelines rewound to one cut.
 *
 * 1. Parse the target as a single pipeline's rewind_spec would be (same codes, same timestamp forms).
 * 2. Read each pipeline's live points and, per point, what its Delta-source flows had read.
 * 3. Plan the cut (pure: shared/rewind/cuts), then plan each pipeline's rewind to its point exactly as
 *    its own update would (planRewind + the update guard). Any refusal refuses the whole request,
 *    naming the pipeline; nothing has changed yet.
 * 4. Unless dry_run, start each pipeline's rewind update, upstreams first, under one request id.
 */
export async function rewindToCut(plane: ControlPlane, body: CutRewindBody) {
  const spec = parseRewindSpec(
    { rewind_point_id: body.rewind_point_id, rewind_timestamp: body.rewind_timestamp },
    plane.clock(),
  );
  const loaded = new Map<string, { env: RewindEnvironment; name: string }>();
  const points = new Map<string, CutPoint[]>();
  const tables: PipelineTables[] = [];
  for (const id of body.pipeline_ids) {
    await requirePipeline(plane, id);
    const { pipeline } = await loadPipeline(plane, id);
    const env = rewindEnvironment(plane, id, pipeline);
    loaded.set(id, { env, name: pipeline.definition.name });
    points.set(id, await cutPoints(env));
    tables.push(pipelineTables(id, pipeline));
  }
  const target =
    spec.target.kind === "timestamp"
      ? ({ kind: "time", time: spec.target.time } as const)
      : ({
          kind: "point",
          pipeline: ownerOf(points, spec.target.rewindPointId),
          rewindPointId: spec.target.rewindPointId,
        } as const);
  // The cut's own refusals name their pipeline already (by the names given).
  const names = new Map([...loaded].map(([id, { name }]) => [id, name]));
  const plan = planCut({ target, points, reads: crossReads(tables), names });
  const rewinds = new Map<string, RewindPlan>();
  for (const step of plan.steps) {
    const at = loaded.get(step.pipeline);
    if (!at) continue;
    await namedRefusalsAsync(loaded, step.pipeline, async () => {
      checkUpdateAllowed(await requirePipeline(plane, step.pipeline), at.env.pipeline.settings, "rewind");
      const spec = parseRewindSpec({ rewind_point_id: step.rewindPointId, dry_run: true }, plane.clock());
      rewinds.set(step.pipeline, await planRewind(at.env, spec));
    });
  }
  const requestId = randomUUID();
  const updates = new Map<string, string>();
  if (!body.dry_run) {
    for (const step of plan.steps) {
      const { update_id } = await startUpdate(
        plane,
        step.pipeline,
        {
          cause: "USER_ACTION",
          validate_only: false,
          rewind_spec: { rewind_point_id: step.rewindPointId },
        },
        { cut: { request_id: requestId } },
      );
      updates.set(step.pipeline, update_id);
    }
  }
  return cutView(requestId, body.dry_run, plan, { loaded, rewinds, updates });
}

/** A point's id names its pipeline: the cut's upstream is the pipeline holding it. */
function ownerOf(points: ReadonlyMap<string, readonly CutPoint[]>, rewindPointId: string): string {
  for (const [pipeline, list] of points)
    if (list.some((p) => p.rewindPointId === rewindPointId)) return pipeline;
  return [...points.keys()][0] ?? "";
}

async function cutPoints(env: RewindEnvironment): Promise<CutPoint[]> {
  const deltaFlows = env.pipeline.definition.datasets.flatMap((d) =>
    d.type === "streaming_table" ? d.flows.filter((f) => f.source.type === "delta").map((f) => f.name) : [],
  );
  const cut: CutPoint[] = [];
  for (const point of await listRewindPoints(env)) {
    if (point.kind === "dry-run") continue;
    const consumed = new Map<string, number>();
    for (const flow of deltaFlows) {
      const seq = point.cut.flows.get(flow);
      const checkpoint = seq === undefined ? undefined : await env.checkpoints.get(flowRef(env, flow), seq);
      const offset = tableOffsetOf(checkpoint);
      consumed.set(flow, offset ? consumedUpTo(offset) : -1);
    }
    cut.push({
      rewindPointId: point.rewindPointId,
      time: point.time,
      tableVersions: new Map([...point.cut.datasets].map(([dataset, at]) => [dataset, at.version])),
      consumed,
    });
  }
  return cut;
}

type Loaded = ReadonlyMap<string, { name: string }>;

async function namedRefusalsAsync(
  loaded: Loaded,
  pipeline: string,
  plan: () => Promise<void>,
): Promise<void> {
  try {
    await plan();
  } catch (error) {
    throw named(loaded, error, pipeline);
  }
}

/** A pipeline's own refusal, said as the whole request's, with the pipeline's name. */
function named(loaded: Loaded, error: unknown, pipeline: string): unknown {
  if (!(error instanceof CodedError)) return error;
  return new CutPipelineRefusedError(loaded.get(pipeline)?.name ?? pipeline, pipeline, error);
}

function cutView(
  requestId: string,
  dryRun: boolean,
  plan: CutPlan,
  per: {
    loaded: Loaded;
    rewinds: ReadonlyMap<string, RewindPlan>;
    updates: ReadonlyMap<string, string>;
  },
) {
  const { loaded, rewinds, updates } = per;
  return {
    request_id: requestId,
    dry_run: dryRun,
    pipelines: plan.steps.map((step) => ({
      pipeline_id: step.pipeline,
      name: loaded.get(step.pipeline)?.name ?? step.pipeline,
      rewind_point_id: step.rewindPointId,
      timestamp: new Date(step.time).toISOString(),
      upstream_versions: step.upstreamVersions.map((u) => ({
        pipeline_id: u.upstream,
        dataset: u.dataset,
        version: u.version,
      })),
      // Each table: its version now, and what the rewind restores it to.
      datasets: (rewinds.get(step.pipeline)?.datasets ?? []).map((d) => ({
        ...plannedDatasetView(d),
        ...(d.checkedVersion !== undefined ? { version: d.checkedVersion } : {}),
      })),
      ...(updates.has(step.pipeline) ? { update_id: updates.get(step.pipeline) } : {}),
    })),
  };
}
