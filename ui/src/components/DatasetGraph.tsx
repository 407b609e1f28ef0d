import {
  Background,
  Controls,
  Handle,
  Position,
  ReactFlow,
  type Edge,
  type Node,
  type NodeProps,
} from "@xyflow/react";
import "@xyflow/react/dist/style.css";
import { useMemo } from "react";
import type { DatasetInfo, DatasetSpec } from "../api/types.ts";
import { formatCount } from "../format.ts";
import { layoutPipeline, NODE_HEIGHT, NODE_WIDTH } from "./graph-layout.ts";

/**
 * The pipeline's DAG: datasets with type, version and rows, external sources, flows as edges. A mark
 * per dataset (failed, running, rewound, selected…) colours its node and is also written on it.
 */

export type DatasetMark =
  "failed" | "running" | "completed" | "rewound" | "selected" | "cascade" | "excluded";

const MARK_WORDS: Readonly<Record<DatasetMark, string>> = {
  failed: "failed",
  running: "running",
  completed: "",
  rewound: "rewound",
  selected: "selected",
  cascade: "via cascade",
  excluded: "",
};

const TYPE_WORDS: Readonly<Record<string, string>> = {
  streaming_table: "Streaming table",
  materialized_view: "Materialized view",
  view: "View",
};

type DatasetNodeData = { dataset: DatasetInfo; mark?: DatasetMark; selectable: boolean };
type SourceNodeData = { label: string };

function DatasetNode({ data }: NodeProps<Node<DatasetNodeData>>) {
  const { dataset, mark } = data;
  return (
    <div
      className={`graph-node ${mark ? `graph-node-${mark}` : ""}`}
      style={{ width: NODE_WIDTH, height: NODE_HEIGHT }}
      data-dataset={dataset.name}
    >
      <Handle type="target" position={Position.Left} isConnectable={false} />
      <div className="graph-node-name">{dataset.name}</div>
      <div className="graph-node-title">
        <span className="graph-node-type">{TYPE_WORDS[dataset.type] ?? dataset.type}</span>
        {mark && MARK_WORDS[mark] && (
          <span className={`graph-mark graph-mark-${mark}`}>{MARK_WORDS[mark]}</span>
        )}
      </div>
      <div className="graph-node-stats">
        <span>v{dataset.version ?? "—"}</span>
        <span>{formatCount(dataset.row_count)} rows</span>
      </div>
      <Handle type="source" position={Position.Right} isConnectable={false} />
    </div>
  );
}

function SourceNode({ data }: NodeProps<Node<SourceNodeData>>) {
  return (
    <div className="graph-source">
      <span>{data.label}</span>
      <Handle type="source" position={Position.Right} isConnectable={false} />
    </div>
  );
}

const NODE_TYPES = { dataset: DatasetNode, source: SourceNode };

export function DatasetGraph(props: {
  datasets: readonly DatasetInfo[];
  specs: readonly DatasetSpec[];
  marks?: Readonly<Record<string, DatasetMark>>;
  running?: boolean;
  onPick?: (dataset: string) => void;
  height?: number;
}) {
  const { nodes, edges, naturalHeight } = useMemo(() => {
    const laid = layoutPipeline(props.datasets, props.specs);
    const naturalHeight = Math.max(0, ...laid.nodes.map((n) => n.y + NODE_HEIGHT)) + 56;
    const nodes: Node[] = laid.nodes.map((n) =>
      n.kind === "dataset"
        ? {
            id: n.id,
            type: "dataset",
            position: { x: n.x, y: n.y },
            data: { dataset: n.dataset!, mark: props.marks?.[n.id], selectable: !!props.onPick },
            ariaLabel: `${n.label}, ${TYPE_WORDS[n.dataset!.type] ?? n.dataset!.type}, version ${n.dataset!.version ?? "none"}, ${n.dataset!.row_count ?? 0} rows${props.marks?.[n.id] ? `, ${MARK_WORDS[props.marks[n.id]!]}` : ""}`,
            draggable: false,
            connectable: false,
            selectable: !!props.onPick,
          }
        : {
            id: n.id,
            type: "source",
            position: { x: n.x, y: n.y },
            data: { label: n.label },
            ariaLabel: `source ${n.label}`,
            draggable: false,
            connectable: false,
            selectable: false,
            focusable: false,
          },
    );
    const edges: Edge[] = laid.edges.map((e) => ({
      id: e.id,
      source: e.source,
      target: e.target,
      animated: !!props.running,
      ...(e.label ? { label: e.label } : {}),
      className: props.marks?.[e.target] === "excluded" ? "edge-muted" : "",
      focusable: false,
    }));
    return { nodes, edges, naturalHeight };
  }, [props.datasets, props.specs, props.marks, props.running, props.onPick]);

  return (
    <div className="graph" style={{ height: Math.min(props.height ?? 520, Math.max(180, naturalHeight)) }}>
      <ReactFlow
        nodes={nodes}
        edges={edges}
        nodeTypes={NODE_TYPES}
        fitView
        fitViewOptions={{ padding: 0.15, maxZoom: 1.1 }}
        minZoom={0.2}
        nodesDraggable={false}
        nodesConnectable={false}
        elementsSelectable={!!props.onPick}
        onNodeClick={(_, node) => node.type === "dataset" && props.onPick?.(node.id)}
      >
        <Background gap={16} size={1} color="#e3e6ea" />
        <Controls showInteractive={false} />
      </ReactFlow>
    </div>
  );
}
