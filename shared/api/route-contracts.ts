import type { z } from "zod";
import * as schemas from "./request-schemas.ts";
import * as responses from "./response-schemas.ts";

/**
 * Every route of the HTTP API (api.md) as a contract: method, path, and the strict schemas of its
 * body, query and success response. The one source of truth: the handler validates with it (`apiRoute`), the stack
 * builds its REST API from it (infra/aws/api-routes.ts), and the OpenAPI document is generated from
 * it (openapi-document.ts).
 */

export interface RouteContract {
  readonly method: "GET" | "POST" | "PUT" | "DELETE";
  /** `{name}` marks a path parameter. */
  readonly path: string;
  readonly summary: string;
  /** `emptyBody` for routes without one (GET, DELETE): any field sent is then refused. */
  readonly body: z.ZodType;
  readonly query: z.ZodType;
  /** The success body (response-schemas.ts): strict, so the contract test catches a field it lacks. */
  readonly response: z.ZodType;
}

const PIPELINES = "/api/2.0/pipelines";
const PIPELINE = `${PIPELINES}/{pipeline_id}`;
const TABLE = "/api/2.0/tables/{full_name}";
const { emptyBody, noQuery } = schemas;

export const ROUTES = {
  createPipeline: {
    method: "POST",
    path: PIPELINES,
    summary: "Create a pipeline → {pipeline_id}",
    body: schemas.createPipelineBody,
    query: noQuery,
    response: responses.createPipelineResponse,
  },
  listPipelines: {
    method: "GET",
    path: PIPELINES,
    summary:
      "List pipelines → {statuses, next_page_token?}, newest first, paged by max_results, filtered by name LIKE '<pattern>'",
    body: emptyBody,
    query: schemas.listPipelinesQuery,
    response: responses.listPipelinesResponse,
  },
  getPipeline: {
    method: "GET",
    path: PIPELINE,
    summary: "A pipeline's settings, definition version, state, latest updates and rewind status",
    body: emptyBody,
    query: noQuery,
    response: responses.getPipelineResponse,
  },
  editPipeline: {
    method: "PUT",
    path: PIPELINE,
    summary: "Edit a pipeline: a new definition version",
    body: schemas.editPipelineBody,
    query: noQuery,
    response: responses.editPipelineResponse,
  },
  deletePipeline: {
    method: "DELETE",
    path: PIPELINE,
    summary: "Delete a pipeline; its tables are kept unless purge=true",
    body: emptyBody,
    query: schemas.deletePipelineQuery,
    response: responses.emptyResponse,
  },
  stopPipeline: {
    method: "POST",
    path: `${PIPELINE}/stop`,
    summary: "Stop the running update (CANCELED)",
    body: emptyBody,
    query: noQuery,
    response: responses.emptyResponse,
  },
  startUpdate: {
    method: "POST",
    path: `${PIPELINE}/updates`,
    summary: "Start an update, a refresh or a rewind → {update_id}",
    body: schemas.startUpdateBody,
    query: noQuery,
    response: responses.startUpdateOrBranchResponse,
  },
  listUpdates: {
    method: "GET",
    path: `${PIPELINE}/updates`,
    summary: "A pipeline's updates, newest first, paged",
    body: emptyBody,
    query: schemas.listUpdatesQuery,
    response: responses.listUpdatesResponse,
  },
  getUpdate: {
    method: "GET",
    path: `${PIPELINE}/updates/{update_id}`,
    summary: "One update with per-flow progress",
    body: emptyBody,
    query: noQuery,
    response: responses.getUpdateResponse,
  },
  listEvents: {
    method: "GET",
    path: `${PIPELINE}/events`,
    summary: "A pipeline's event log, filtered and ordered, paged",
    body: emptyBody,
    query: schemas.listEventsQuery,
    response: responses.listEventsResponse,
  },
  listDatasets: {
    method: "GET",
    path: `${PIPELINE}/datasets`,
    summary: "A pipeline's datasets: versions, row counts, flows, upstreams",
    body: emptyBody,
    query: noQuery,
    response: responses.listDatasetsResponse,
  },
  listBranches: {
    method: "GET",
    path: `${PIPELINE}/branches`,
    summary: "A pipeline's branches (docs/branches.md) → {branches, next_page_token?}, by name",
    body: emptyBody,
    query: schemas.listBranchesQuery,
    response: responses.listBranchesResponse,
  },
  getBranch: {
    method: "GET",
    path: `${PIPELINE}/branches/{branch_name}`,
    summary: "One branch, with each branch table's latest version",
    body: emptyBody,
    query: noQuery,
    response: responses.getBranchResponse,
  },
  branchDiff: {
    method: "GET",
    path: `${PIPELINE}/branches/{branch_name}/diff`,
    summary: "Per table: rows only on the branch, only on live, and changed by key, counted and sampled",
    body: emptyBody,
    query: schemas.branchDiffQuery,
    response: responses.branchDiffResponse,
  },
  publishBranch: {
    method: "POST",
    path: `${PIPELINE}/branches/{branch_name}/publish`,
    summary:
      "Make live equal the branch: one RESTORE-like commit per table, the branch's checkpoints as live's, a rewind point before it",
    body: emptyBody,
    query: noQuery,
    response: responses.publishBranchResponse,
  },
  discardBranch: {
    method: "POST",
    path: `${PIPELINE}/branches/{branch_name}/discard`,
    summary: "Delete a branch: its record and logs (VACUUM then removes its files)",
    body: emptyBody,
    query: noQuery,
    response: responses.emptyResponse,
  },
  listRewindPoints: {
    method: "GET",
    path: `${PIPELINE}/rewind-points`,
    summary: "A pipeline's live rewind points, newest first, paged (100 a page unless max_results)",
    body: emptyBody,
    query: schemas.listRewindPointsQuery,
    response: responses.listRewindPointsResponse,
  },
  captureRewindPoint: {
    method: "POST",
    path: `${PIPELINE}/rewind-points`,
    summary: "Capture a rewind point now",
    body: emptyBody,
    query: noQuery,
    response: responses.rewindPointResponse,
  },
  getFlowState: {
    method: "GET",
    path: `${PIPELINE}/flows/{flow_name}/state`,
    summary: "A flow's operator state as rows, at HEAD, a checkpoint or a rewind point, paged",
    body: emptyBody,
    query: schemas.flowStateQuery,
    response: responses.flowStateInfo,
  },
  getTableHistory: {
    method: "GET",
    path: `${TABLE}/history`,
    summary: "A table's history (DESCRIBE HISTORY), newest first",
    body: emptyBody,
    query: noQuery,
    response: responses.tableHistoryResponse,
  },
  listTableChanges: {
    method: "GET",
    path: `${TABLE}/changes`,
    summary: "A table's change feed (table_changes) between versions, paged",
    body: emptyBody,
    query: schemas.tableChangesQuery,
    response: responses.tableChangesResponse,
  },
  queryTable: {
    method: "POST",
    path: `${TABLE}/query`,
    summary: "A SELECT over a table as of a version or time",
    body: schemas.queryTableBody,
    query: noQuery,
    response: responses.queryTableResponse,
  },
  vacuumTable: {
    method: "POST",
    path: `${TABLE}/vacuum`,
    summary: "VACUUM a table, keeping the files of live rewind points",
    body: schemas.vacuumTableBody,
    query: noQuery,
    response: responses.vacuumTableResponse,
  },
  findOnset: {
    method: "POST",
    path: `${TABLE}/onset`,
    summary: "The first table version with rows matching a predicate, and the timestamp to rewind to",
    body: schemas.onsetBody,
    query: noQuery,
    response: responses.findOnsetResponse,
  },
  optimizeTable: {
    method: "POST",
    path: `${TABLE}/optimize`,
    summary: "Compact a table's small files (bin-packing)",
    body: schemas.optimizeTableBody,
    query: noQuery,
    response: responses.optimizeTableResponse,
  },
  executeStatement: {
    method: "POST",
    path: "/api/2.0/sql/statements",
    summary:
      "Run a Databricks SQL query (event_log, table_changes, DESCRIBE HISTORY, tables) → a StatementResponse",
    body: schemas.executeStatementBody,
    query: noQuery,
    response: responses.statementResponse,
  },
  getStatement: {
    method: "GET",
    path: "/api/2.0/sql/statements/{statement_id}",
    summary: "A statement's answer again (status, manifest, the first chunk), for 24 hours after it ran",
    body: emptyBody,
    query: noQuery,
    response: responses.statementResponse,
  },
  getStatementResultChunk: {
    method: "GET",
    path: "/api/2.0/sql/statements/{statement_id}/result/chunks/{chunk_index}",
    summary:
      "One chunk of a statement's result (the first is in the answer; `next_chunk_index` names the next)",
    body: emptyBody,
    query: noQuery,
    response: responses.statementChunkResponse,
  },
  cancelStatement: {
    method: "POST",
    path: "/api/2.0/sql/statements/{statement_id}/cancel",
    summary: "Cancel a statement: Ebb answers once a statement is done, so there is never one to cancel",
    body: emptyBody,
    query: noQuery,
    response: responses.emptyResponse,
  },
  getOpenApi: {
    method: "GET",
    path: "/api/2.0/openapi.json",
    summary: "This API's OpenAPI 3.1 document",
    body: emptyBody,
    query: noQuery,
    response: responses.openApiResponse,
  },
  rewindToCut: {
    method: "POST",
    path: "/api/2.0/ebb/rewinds",
    summary:
      "Rewind several pipelines to one cut (a time, or a point of the upstream one) → the plan, and each pipeline's update_id unless dry_run",
    body: schemas.cutRewindBody,
    query: noQuery,
    response: responses.rewindToCutResponse,
  },
  startOrderedRun: {
    method: "POST",
    path: "/api/2.0/ebb/runs",
    summary:
      "Run several pipelines one after another, upstreams first (the replay after a cut) → the order, and the first pipeline's update_id unless dry_run",
    body: schemas.orderedRunBody,
    query: noQuery,
    response: responses.orderedRunResponse,
  },
} as const satisfies Record<string, RouteContract>;

export type RouteName = keyof typeof ROUTES;

/** The parameter names of a path: `/a/{b}/c/{d}` → `["b", "d"]`. */
export function pathParameters(path: string): string[] {
  return [...path.matchAll(/\{(\w+)\}/g)].map((match) => match[1]!);
}
