import { graphlib, layout } from "@dagrejs/dagre";
import type { DatasetInfo, DatasetSpec } from "../api/types.ts";

/**
 * The pipeline as a graph to draw (pure): one node per dataset, one per external source a flow reads,
 * an edge per upstream, laid out left to right by dagre.
 */

export const NODE_WIDTH = 220;
export const NODE_HEIGHT = 74;
const SOURCE_HEIGHT = 40;

export interface GraphNode {
  readonly id: string;
  readonly kind: "dataset" | "source";
  readonly label: string;
  readonly x: number;
  readonly y: number;
  readonly dataset?: DatasetInfo;
  readonly sourceType?: string;
}

export interface GraphEdge {
  readonly id: string;
  readonly source: string;
  readonly target: string;
  readonly label?: string;
}

export function layoutPipeline(
  datasets: readonly DatasetInfo[],
  specs: readonly DatasetSpec[],
): { nodes: GraphNode[]; edges: GraphEdge[] } {
  const g = new graphlib.Graph();
  g.setGraph({ rankdir: "LR", nodesep: 28, ranksep: 80, marginx: 16, marginy: 16 });
  g.setDefaultEdgeLabel(() => ({}));
  const edges: GraphEdge[] = [];
  const sources = new Map<string, string>();
  for (const dataset of datasets) g.setNode(dataset.name, { width: NODE_WIDTH, height: NODE_HEIGHT });
  for (const spec of specs) {
    for (const flow of spec.flows ?? []) {
      const source = flow.source;
      if (!source || source.type === "stream" || source.dataset) continue;
      const id = `source:${flow.name}`;
      sources.set(id, source.type);
      g.setNode(id, { width: NODE_WIDTH * 0.8, height: SOURCE_HEIGHT });
      g.setEdge(id, spec.name);
      edges.push({ id: `${id}->${spec.name}`, source: id, target: spec.name, label: flow.name });
    }
  }
  for (const dataset of datasets) {
    for (const upstream of dataset.upstreams) {
      if (!g.hasNode(upstream)) continue;
      g.setEdge(upstream, dataset.name);
      edges.push({ id: `${upstream}->${dataset.name}`, source: upstream, target: dataset.name });
    }
  }
  layout(g);
  const nodes: GraphNode[] = [];
  for (const dataset of datasets) {
    const at = g.node(dataset.name);
    nodes.push({
      id: dataset.name,
      kind: "dataset",
      label: dataset.name,
      x: at.x - NODE_WIDTH / 2,
      y: at.y - NODE_HEIGHT / 2,
      dataset,
    });
  }
  for (const [id, type] of sources) {
    const at = g.node(id);
    nodes.push({
      id,
      kind: "source",
      label: type,
      x: at.x - (NODE_WIDTH * 0.8) / 2,
      y: at.y - SOURCE_HEIGHT / 2,
      sourceType: type,
    });
  }
  return { nodes, edges };
}

/** Every dataset downstream of `names` (for display: the API decides what a cascade includes). */
export function downstreamOf(datasets: readonly DatasetInfo[], names: ReadonlySet<string>): Set<string> {
  const found = new Set<string>();
  let grew = true;
  while (grew) {
    grew = false;
    for (const dataset of datasets) {
      if (found.has(dataset.name) || names.has(dataset.name)) continue;
      if (dataset.upstreams.some((u) => names.has(u) || found.has(u))) {
        found.add(dataset.name);
        grew = true;
      }
    }
  }
  return found;
}
