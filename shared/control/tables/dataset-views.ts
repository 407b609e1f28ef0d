import { currentSnapshot, statsRecordCount, TableNotFoundError } from "../../delta/index.ts";
import { upstreamOf } from "../../pipeline/pipeline-graph.ts";
import { mapInParallel } from "../../object-store/map-in-parallel.ts";
import {
  loadPipeline,
  requirePipeline,
  rewindEnvironment,
  type ControlPlane,
} from "../plane/control-plane.ts";

/**
 * `GET /pipelines/{id}/datasets` (api.md "Tables"): each dataset with its table's current version,
 * row count (from the data files' stats), flows and upstreams. A dataset not written yet has version
 * null; a view stores nothing.
 */
export async function listDatasets(plane: ControlPlane, pipelineId: string) {
  await requirePipeline(plane, pipelineId);
  const { pipeline } = await loadPipeline(plane, pipelineId);
  const env = rewindEnvironment(plane, pipelineId, pipeline);
  const { catalog, schema } = pipeline.definition;
  const tables = await mapInParallel(pipeline.definition.datasets, SNAPSHOTS_IN_PARALLEL, (dataset) =>
    dataset.type === "view" ? Promise.resolve(undefined) : tableState(env.tableStore(dataset.name)),
  );
  const datasets = pipeline.definition.datasets.map((dataset, i) => {
    const table = tables[i];
    return {
      name: dataset.name,
      identifier: `${catalog}.${schema}.${dataset.name}`,
      type: dataset.type,
      version: table?.version ?? null,
      row_count: table?.rows ?? null,
      last_commit_time: table ? new Date(table.timestamp).toISOString() : null,
      flows: dataset.type === "streaming_table" ? dataset.flows.map((flow) => flow.name) : [],
      upstreams: upstreamOf(pipeline.graph, dataset.name),
    };
  });
  return { datasets };
}

/**
 * Snapshot loads in flight at once. Each is one or more small, dependent object-store reads (the
 * log's listing, then any commits since), so one after the other a 50-dataset pipeline waits for 50
 * round trips or more in a row; a handful at a time overlaps them without flooding the store or the
 * connection pool.
 */
const SNAPSHOTS_IN_PARALLEL = 8;

async function tableState(store: Parameters<typeof currentSnapshot>[0]) {
  try {
    // The process's snapshot cache: a table this process has seen costs one LIST of its log's tail.
    const snapshot = await currentSnapshot(store);
    let rows: number | null = 0;
    for (const file of snapshot.files.values()) {
      const records = statsRecordCount(file.stats);
      rows = rows === null || records === undefined ? null : rows + records;
    }
    return { version: snapshot.version, timestamp: snapshot.timestamp, rows };
  } catch (error) {
    if (error instanceof TableNotFoundError) return undefined;
    throw error;
  }
}
