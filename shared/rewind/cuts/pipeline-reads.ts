import { PipelineCycleError } from "./errors.ts";

/**
 * Which pipelines read which others' tables. A pipeline reads another's table through a `delta`
 * source whose path is that table's location (pipelineTables: the bucket-relative folder); the graph is built from those facts alone, so the
 * planner stays pure (the control plane resolves the locations).
 */

export interface PipelineTables {
  /** The pipeline's name, as users address it. */
  readonly pipeline: string;
  /** Each of its tables: its location → its dataset. */
  readonly tables: ReadonlyMap<string, string>;
  /** Each flow reading a Delta table by location. */
  readonly deltaReads: readonly { readonly flow: string; readonly location: string }[];
}

/** One flow of `reader` reading `dataset` of `upstream`. */
export interface CrossRead {
  readonly reader: string;
  readonly flow: string;
  readonly upstream: string;
  readonly dataset: string;
}

/** Every read from one of the given pipelines of another one's table. */
export function crossReads(pipelines: readonly PipelineTables[]): CrossRead[] {
  const reads: CrossRead[] = [];
  for (const p of pipelines)
    for (const read of p.deltaReads) {
      const owner = pipelines.find(
        (o) => o.pipeline !== p.pipeline && tableAt(o, read.location) !== undefined,
      );
      const dataset = owner && tableAt(owner, read.location);
      if (owner && dataset)
        reads.push({ reader: p.pipeline, flow: read.flow, upstream: owner.pipeline, dataset });
    }
  return reads;
}

/**
 * The dataset of `p` at `location`: its table location itself, or a URI ending in it (a bucket-relative
 * table folder, `tables/<catalog>/<schema>/<table>/`, read as `s3://<bucket>/tables/…`).
 */
function tableAt(p: PipelineTables, location: string): string | undefined {
  const read = trimSlash(location);
  for (const [at, dataset] of p.tables) {
    const table = trimSlash(at);
    if (read === table || read.endsWith(`/${table}`)) return dataset;
  }
  return undefined;
}

/**
 * The pipelines, upstreams first (Kahn's algorithm; ties keep the request's order, so the order is
 * stable). Refuses a cycle, naming the pipelines in it.
 */
export function dependencyOrder(pipelines: readonly string[], reads: readonly CrossRead[]): string[] {
  const upstreams = new Map(pipelines.map((p) => [p, new Set<string>()]));
  for (const r of reads) upstreams.get(r.reader)?.add(r.upstream);
  const order: string[] = [];
  const left = new Set(pipelines);
  while (left.size > 0) {
    const next = [...left].find((p) => [...(upstreams.get(p) ?? [])].every((u) => !left.has(u)));
    if (next === undefined) throw new PipelineCycleError([...left]);
    order.push(next);
    left.delete(next);
  }
  return order;
}

function trimSlash(location: string): string {
  return location.replace(/\/+$/, "");
}
