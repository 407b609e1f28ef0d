import type { DefinitionIssue } from "./errors.ts";
import type { PipelineDefinition } from "./definition-schema.ts";
import type { DatasetEdge } from "./pipeline-graph.ts";
import { qualifiedName, type TableReference } from "./sql-references.ts";

/**
 * Resolves what each dataset reads — its flows' stream sources and the tables named in its SQL — to
 * datasets of this pipeline, as graph edges. A name that is not one of them is an error: a pipeline's
 * SQL reads only its own datasets (and, in a flow, `source`, the micro-batch).
 */

/** In a flow's SQL, the micro-batch; never a dataset (so no dataset may be called this). */
export const MICRO_BATCH_NAME = "source";

/** The SQL texts of a definition, keyed by their path (`datasets[2].flows[0].sql`). */
export interface SqlText {
  readonly path: string;
  readonly sql: string;
  readonly dataset: string;
  readonly flow?: string;
  /** Where `source` means the micro-batch. */
  readonly isFlowQuery: boolean;
  /** A stream-stream join's second stream: in this SQL its name is the stream, not a snapshot. */
  readonly joinedStream?: string;
}

/** Every query of the definition whose table references form edges. */
export function queriesOf(definition: PipelineDefinition): SqlText[] {
  const queries: SqlText[] = [];
  definition.datasets.forEach((dataset, d) => {
    if (dataset.type === "streaming_table") {
      dataset.flows.forEach((flow, f) => {
        queries.push({
          path: `datasets[${d}].flows[${f}].sql`,
          sql: flow.sql,
          dataset: dataset.name,
          flow: flow.name,
          isFlowQuery: true,
          ...(flow.join ? { joinedStream: flow.join.stream } : {}),
        });
      });
    } else {
      queries.push({
        path: `datasets[${d}].sql`,
        sql: dataset.sql,
        dataset: dataset.name,
        isFlowQuery: false,
      });
    }
  });
  return queries;
}

export interface ResolvedReferences {
  readonly edges: DatasetEdge[];
  readonly issues: DefinitionIssue[];
}

/**
 * Edges from stream sources and SQL references. `referencesByPath` holds the parsed references of
 * each query in `queriesOf(definition)` (queries that did not parse are simply absent).
 */
export function resolveReferences(
  definition: PipelineDefinition,
  referencesByPath: ReadonlyMap<string, readonly TableReference[]>,
): ResolvedReferences {
  const types = new Map(definition.datasets.map((dataset) => [dataset.name, dataset.type]));
  const known = [...types.keys()].join(", ");
  const edges: DatasetEdge[] = [];
  const issues: DefinitionIssue[] = [];

  const streamEdge = (dataset: string, flow: string, upstream: string, path: string): void => {
    const upstreamType = types.get(upstream);
    if (upstreamType === undefined) {
      issues.push({
        path,
        message: `flow "${flow}" streams from "${upstream}", which is not a dataset of this pipeline (datasets: ${known})`,
      });
    } else if (upstreamType !== "streaming_table") {
      issues.push({
        path,
        message: `flow "${flow}" streams from "${upstream}", a ${upstreamType}: only a streaming_table can be read as a stream (${upstreamType === "view" ? "a view stores nothing" : "a materialized view is rewritten by every update"}); read it in the SQL instead, as a snapshot`,
      });
    } else {
      edges.push({ from: upstream, to: dataset, kind: "stream", flow });
    }
  };
  definition.datasets.forEach((dataset, d) => {
    if (dataset.type !== "streaming_table") return;
    dataset.flows.forEach((flow, f) => {
      const at = `datasets[${d}].flows[${f}]`;
      if (flow.source.type === "stream")
        streamEdge(dataset.name, flow.name, flow.source.dataset, `${at}.source.dataset`);
      if (flow.join) streamEdge(dataset.name, flow.name, flow.join.stream, `${at}.join.stream`);
    });
  });

  for (const query of queriesOf(definition)) {
    for (const reference of referencesByPath.get(query.path) ?? []) {
      if (query.isFlowQuery && isUnqualified(reference) && reference.table === MICRO_BATCH_NAME) continue;
      if (isUnqualified(reference) && reference.table === query.joinedStream) continue;
      const target = datasetNamed(definition, reference, types);
      if (target !== undefined) {
        edges.push({
          from: target,
          to: query.dataset,
          kind: "read",
          ...(query.flow ? { flow: query.flow } : {}),
        });
        continue;
      }
      const reader = query.flow ? `flow "${query.flow}"` : `dataset "${query.dataset}"`;
      const hint =
        reference.table === MICRO_BATCH_NAME && !query.isFlowQuery
          ? `; "${MICRO_BATCH_NAME}" is the micro-batch only in a flow's SQL`
          : query.isFlowQuery
            ? `; a flow's SQL reads "${MICRO_BATCH_NAME}" (its micro-batch) and this pipeline's datasets (${known})`
            : `; SQL here reads this pipeline's datasets only (${known})`;
      issues.push({
        path: query.path,
        message: `${reader} reads "${qualifiedName(reference)}", which is not a dataset of this pipeline${hint}`,
      });
    }
  }
  return { edges, issues };
}

function isUnqualified(reference: TableReference): boolean {
  return reference.catalog === undefined && reference.schema === undefined;
}

/** `t`, `schema.t` and `catalog.schema.t` name dataset `t` when the written parts match the pipeline. */
function datasetNamed(
  definition: PipelineDefinition,
  reference: TableReference,
  types: ReadonlyMap<string, unknown>,
): string | undefined {
  if (!types.has(reference.table)) return undefined;
  if (reference.schema !== undefined && reference.schema !== definition.schema) return undefined;
  if (reference.catalog !== undefined && reference.catalog !== definition.catalog) return undefined;
  return reference.table;
}
