/**
 * The DAG of a pipeline's datasets (semantics.md "Pipeline, datasets, flows"): an edge runs from a
 * dataset to every dataset that reads it, as a stream (a flow's `source`) or as a snapshot (a table
 * named in SQL). Levels are the waves an update runs in; closures are what a rewind cascades to.
 */

/** How a dataset reads another. */
export type EdgeKind = "stream" | "read";

export interface DatasetEdge {
  /** The dataset read. */
  readonly from: string;
  /** The dataset that reads it. */
  readonly to: string;
  readonly kind: EdgeKind;
  /** The flow that reads, when the reader is a streaming table. */
  readonly flow?: string;
}

export interface PipelineGraph {
  /** Dataset names in definition order. */
  readonly datasets: readonly string[];
  readonly edges: readonly DatasetEdge[];
  /** Waves: every dataset's upstreams are in earlier waves; each wave keeps definition order. */
  readonly levels: readonly (readonly string[])[];
}

/** The graph, or the datasets of one cycle (`[a, b, a]`: a is read by b, b by a). */
export type GraphResult =
  | { readonly ok: true; readonly graph: PipelineGraph }
  | { readonly ok: false; readonly cycle: readonly string[] };

/**
 * Builds the graph and its levels (Kahn's algorithm: a dataset's level is one more than its deepest
 * upstream). Datasets left over when no more can be levelled lie on or behind a cycle; one concrete
 * cycle is traced among them so the error can name it.
 */
export function buildPipelineGraph(datasets: readonly string[], edges: readonly DatasetEdge[]): GraphResult {
  const upstreams = adjacency(datasets, edges, "upstream");
  const level = new Map<string, number>();
  let progressed = true;
  while (progressed) {
    progressed = false;
    for (const name of datasets) {
      if (level.has(name)) continue;
      const ups = [...(upstreams.get(name) ?? [])];
      if (ups.every((up) => level.has(up))) {
        level.set(
          name,
          ups.reduce((deepest, up) => Math.max(deepest, (level.get(up) ?? 0) + 1), 0),
        );
        progressed = true;
      }
    }
  }
  if (level.size < datasets.length) {
    return {
      ok: false,
      cycle: traceCycle(
        datasets.filter((name) => !level.has(name)),
        upstreams,
      ),
    };
  }
  const levels: string[][] = [];
  for (const name of datasets) (levels[level.get(name) ?? 0] ??= []).push(name);
  return { ok: true, graph: { datasets: [...datasets], edges: [...edges], levels } };
}

/** The datasets that read `name` directly. */
export function downstreamOf(graph: PipelineGraph, name: string): string[] {
  return unique(graph.edges.filter((edge) => edge.from === name).map((edge) => edge.to));
}

/** The datasets `name` reads directly. */
export function upstreamOf(graph: PipelineGraph, name: string): string[] {
  return unique(graph.edges.filter((edge) => edge.to === name).map((edge) => edge.from));
}

/**
 * `names` and everything downstream of them (what a rewind with `cascade: true` covers), in run order:
 * upstream first.
 */
export function downstreamClosure(graph: PipelineGraph, names: Iterable<string>): string[] {
  return inRunOrder(
    graph,
    reach(graph, names, (name) => downstreamOf(graph, name)),
  );
}

/** `names` and everything they read, directly or not, in run order. */
export function upstreamClosure(graph: PipelineGraph, names: Iterable<string>): string[] {
  return inRunOrder(
    graph,
    reach(graph, names, (name) => upstreamOf(graph, name)),
  );
}

/** Sorts dataset names by level, then definition order. */
export function inRunOrder(graph: PipelineGraph, names: Iterable<string>): string[] {
  const wanted = new Set(names);
  return graph.levels.flat().filter((name) => wanted.has(name));
}

function reach(graph: PipelineGraph, start: Iterable<string>, next: (name: string) => string[]): Set<string> {
  const seen = new Set<string>();
  const pending = [...start].filter((name) => graph.datasets.includes(name));
  while (pending.length > 0) {
    const name = pending.pop() as string;
    if (seen.has(name)) continue;
    seen.add(name);
    pending.push(...next(name));
  }
  return seen;
}

function adjacency(
  datasets: readonly string[],
  edges: readonly DatasetEdge[],
  direction: "upstream" | "downstream",
) {
  const map = new Map<string, Set<string>>(datasets.map((name) => [name, new Set<string>()]));
  for (const edge of edges) {
    if (direction === "upstream") map.get(edge.to)?.add(edge.from);
    else map.get(edge.from)?.add(edge.to);
  }
  return map;
}

/**
 * Every unlevelled dataset has an unlevelled upstream, so walking upstream from any of them must
 * revisit a dataset: the walk from its first visit is a cycle. Reversed to read in data-flow order.
 */
function traceCycle(
  unlevelled: readonly string[],
  upstreams: ReadonlyMap<string, ReadonlySet<string>>,
): string[] {
  const remaining = new Set(unlevelled);
  const path: string[] = [];
  let current = unlevelled[0] as string;
  while (!path.includes(current)) {
    path.push(current);
    current = [...(upstreams.get(current) ?? [])].find((up) => remaining.has(up)) as string;
  }
  const cycle = path.slice(path.indexOf(current));
  return [...cycle, current].reverse();
}

function unique(values: string[]): string[] {
  return [...new Set(values)];
}
