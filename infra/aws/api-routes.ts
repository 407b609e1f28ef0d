import type { FunctionAccess } from "./function-access.ts";

/**
 * Every route of the HTTP API (api.md), with the handler that serves it and what that handler may
 * touch. The REST API is built from this table; the local runtime reads the routes back out of the
 * synthesized template, so there is no second list.
 */

export interface ApiRoute {
  readonly method: "GET" | "POST" | "PUT" | "DELETE";
  /** Under the API root; `{name}` marks a path parameter. */
  readonly path: string;
  /** The handler module under functions/ (exports `handler`). */
  readonly entry: string;
  readonly access: FunctionAccess;
}

const R = "read" as const;
const RW = "readWrite" as const;
const PIPELINES = "/api/2.0/pipelines";
const PIPELINE = `${PIPELINES}/{pipeline_id}`;
const TABLE = "/api/2.0/tables/{full_name}";
/** Reads a pipeline's definition and its tables' state (rewind points, datasets). */
const READ_TABLES = { "tables/": R } as const;

export const API_ROUTES: readonly ApiRoute[] = [
  { method: "POST", path: PIPELINES, entry: "create-pipeline.ts", access: { tables: { pipelines: RW } } },
  {
    method: "GET",
    path: PIPELINES,
    entry: "list-pipelines.ts",
    access: { tables: { pipelines: R, updates: R } },
  },
  {
    method: "GET",
    path: PIPELINE,
    entry: "get-pipeline.ts",
    access: { tables: { pipelines: R, updates: R, checkpoints: R, eventLog: R }, bucket: READ_TABLES },
  },
  { method: "PUT", path: PIPELINE, entry: "edit-pipeline.ts", access: { tables: { pipelines: RW } } },
  {
    method: "DELETE",
    path: PIPELINE,
    entry: "delete-pipeline.ts",
    access: { tables: { pipelines: RW }, bucket: { "tables/": RW } },
  },
  {
    method: "POST",
    path: `${PIPELINE}/stop`,
    entry: "stop-pipeline.ts",
    access: { tables: { pipelines: RW, updates: RW, eventLog: RW }, stateMachine: ["stop"] },
  },
  {
    method: "POST",
    path: `${PIPELINE}/updates`,
    entry: "start-update.ts",
    access: {
      tables: { pipelines: RW, updates: RW, checkpoints: R, eventLog: RW },
      bucket: { "tables/": R, "state/": R },
      stateMachine: ["start"],
      heavy: true,
    },
  },
  {
    method: "GET",
    path: `${PIPELINE}/updates`,
    entry: "list-updates.ts",
    access: { tables: { pipelines: R, updates: R } },
  },
  {
    method: "GET",
    path: `${PIPELINE}/updates/{update_id}`,
    entry: "get-update.ts",
    access: { tables: { pipelines: R, updates: R, eventLog: R } },
  },
  {
    method: "GET",
    path: `${PIPELINE}/events`,
    entry: "list-events.ts",
    access: { tables: { pipelines: R, eventLog: R } },
  },
  {
    method: "GET",
    path: `${PIPELINE}/datasets`,
    entry: "list-datasets.ts",
    access: { tables: { pipelines: R }, bucket: READ_TABLES },
  },
  {
    method: "GET",
    path: `${PIPELINE}/rewind-points`,
    entry: "list-rewind-points.ts",
    // Each point's table versions are checked whole (restorable).
    access: { tables: { pipelines: R, eventLog: R }, bucket: READ_TABLES },
  },
  {
    method: "POST",
    path: `${PIPELINE}/rewind-points`,
    entry: "capture-rewind-point.ts",
    access: { tables: { pipelines: R, checkpoints: R, eventLog: RW }, bucket: READ_TABLES, heavy: true },
  },
  { method: "GET", path: `${TABLE}/history`, entry: "get-table-history.ts", access: { bucket: READ_TABLES } },
  {
    method: "GET",
    path: `${TABLE}/changes`,
    entry: "list-table-changes.ts",
    access: { bucket: READ_TABLES, heavy: true },
  },
  {
    method: "POST",
    path: `${TABLE}/query`,
    entry: "query-table.ts",
    access: { bucket: READ_TABLES, heavy: true },
  },
  {
    method: "POST",
    path: `${TABLE}/vacuum`,
    entry: "vacuum-table.ts",
    // Reads the owner's live rewind points (the event log) to keep their files.
    access: { tables: { pipelines: R, eventLog: R }, bucket: { "tables/": RW }, heavy: true },
  },
  {
    method: "POST",
    path: `${TABLE}/onset`,
    entry: "find-onset.ts",
    access: { bucket: READ_TABLES, heavy: true },
  },
  {
    method: "POST",
    path: `${TABLE}/optimize`,
    entry: "optimize-table.ts",
    access: { bucket: { "tables/": RW }, heavy: true },
  },
];

/** The scheduled capture (EventBridge): every rewind-enabled pipeline. */
export const CAPTURE_SCHEDULE = {
  entry: "capture-rewind-points.ts",
  access: { tables: { pipelines: R, checkpoints: R, eventLog: RW }, bucket: READ_TABLES, heavy: true },
} as const satisfies { entry: string; access: FunctionAccess };
