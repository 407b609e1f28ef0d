import { CutPointNotFoundError, NoPointInCutError, NotDownstreamOfCutError } from "./errors.ts";
import { dependencyOrder, type CrossRead } from "./pipeline-reads.ts";

/**
 * A rewind of several pipelines to one consistent cut (docs/rewind-across-pipelines.md), planned as
 * data before anything changes:
 *
 * 1. Order the pipelines upstreams first (pipeline-reads.ts); a cycle is refused.
 * 2. The cut's first pipeline takes the named point, or its newest point at or before the time.
 * 3. Each later pipeline takes its newest point (at or before the time, when cut by time) whose
 *    flows had read every upstream table of the request at a version no later than that upstream's
 *    chosen point holds, so no row kept downstream depends on an upstream row the rewind removes.
 *    Cut by a point, every other pipeline must read (through the request) from the point's pipeline.
 * 4. A pipeline with no such point refuses the whole request, naming it and why.
 */

/** A live point as the planner needs it. */
export interface CutPoint {
  readonly rewindPointId: string;
  /** Epoch ms of the point's cut. */
  readonly time: number;
  /** Per dataset, the table version the point restores (absent: no table then). */
  readonly tableVersions: ReadonlyMap<string, number>;
  /** Per flow, the last version of its Delta source its checkpoint at the point had read (-1: none). */
  readonly consumed: ReadonlyMap<string, number>;
}

export type CutTarget =
  | { readonly kind: "time"; readonly time: number }
  | { readonly kind: "point"; readonly pipeline: string; readonly rewindPointId: string };

export interface CutRequest {
  readonly target: CutTarget;
  /** Per pipeline, its live points (any order). */
  readonly points: ReadonlyMap<string, readonly CutPoint[]>;
  readonly reads: readonly CrossRead[];
  /** Per pipeline, the name its refusals say (default: the key itself). */
  readonly names?: ReadonlyMap<string, string>;
}

/** What each pipeline rewinds to, in the order they are rewound. */
export interface CutPlan {
  readonly steps: readonly CutStep[];
}

export interface CutStep {
  readonly pipeline: string;
  readonly rewindPointId: string;
  readonly time: number;
  /** The upstream tables this pipeline reads and the versions the cut keeps of them. */
  readonly upstreamVersions: readonly { upstream: string; dataset: string; version: number }[];
}

export function planCut(request: CutRequest): CutPlan {
  const pipelines = [...request.points.keys()];
  const order =
    request.target.kind === "point"
      ? startWith(request.target.pipeline, dependencyOrder(pipelines, request.reads))
      : dependencyOrder(pipelines, request.reads);
  const chosen = new Map<string, CutPoint>();
  const steps: CutStep[] = [];
  for (const pipeline of order) {
    const points = request.points.get(pipeline) ?? [];
    const reads = request.reads.filter((r) => r.reader === pipeline && chosen.has(r.upstream));
    const bound = reads.map((r) => ({
      read: r,
      version: chosen.get(r.upstream)?.tableVersions.get(r.dataset) ?? -1,
    }));
    const label = (p: string) => request.names?.get(p) ?? p;
    const point = pick(request.target, pipeline, points, bound, label);
    chosen.set(pipeline, point);
    steps.push({
      pipeline,
      rewindPointId: point.rewindPointId,
      time: point.time,
      upstreamVersions: bound.map((b) => ({
        upstream: b.read.upstream,
        dataset: b.read.dataset,
        version: b.version,
      })),
    });
  }
  return { steps };
}

function pick(
  target: CutTarget,
  pipeline: string,
  points: readonly CutPoint[],
  bound: readonly { read: CrossRead; version: number }[],
  label: (pipeline: string) => string,
): CutPoint {
  if (target.kind === "point" && target.pipeline === pipeline) {
    const named = points.find((p) => p.rewindPointId === target.rewindPointId);
    if (!named) throw new CutPointNotFoundError(pipeline, target.rewindPointId, label(pipeline));
    return named;
  }
  if (target.kind === "point" && bound.length === 0)
    throw new NotDownstreamOfCutError(pipeline, target.pipeline, {
      pipeline: label(pipeline),
      upstream: label(target.pipeline),
    });
  const inTime = target.kind === "time" ? points.filter((p) => p.time <= target.time) : [...points];
  if (inTime.length === 0) throw new NoPointInCutError(pipeline, "none-before-time", label(pipeline));
  const inside = inTime
    .filter((p) => bound.every((b) => (p.consumed.get(b.read.flow) ?? -1) <= b.version))
    .sort((a, b) => b.time - a.time);
  const newest = inside[0];
  if (!newest) throw new NoPointInCutError(pipeline, "reads-past-cut", label(pipeline));
  return newest;
}

/**
 * The point's pipeline first: the cut is defined by it. A pipeline then reached by no read from an
 * earlier one (an upstream of it, or unrelated) is refused by `pick`.
 */
function startWith(first: string, order: readonly string[]): string[] {
  return [first, ...order.filter((p) => p !== first)];
}
