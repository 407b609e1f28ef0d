import { ROUTES, type RouteContract } from "../../shared/api/route-contracts.ts";
import type { FunctionAccess } from "./function-access.ts";

/**
 * Every route of the HTTP API (api.md: its contract in route-contracts.ts), with the handler that
 * serves it and what that handler may touch. The REST API is built from this table; the local
 * runtime reads the routes back out of the synthesized template, so there is no second list.
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
/** Reads a pipeline's definition and its tables' state (rewind points, datasets). */
const READ_TABLES = { "tables/": R } as const;

/**
 * Starts a pipeline's update as start-update does: holds the pipeline, writes the rewind's plan and
 * the lifecycle event's claim under state/, checks a rewind against its sources' retention (the event
 * streams), starts the state machine. start-update adds the writes of a branch.
 */
const STARTS_AN_UPDATE = {
  tables: { pipelines: RW, updates: RW, checkpoints: R, eventLog: RW },
  bucket: { "tables/": R, "state/": RW },
  stateMachine: ["start"],
  heavy: true,
  eventStreams: true,
  lifecycleEvents: true,
} as const satisfies FunctionAccess;

/** A contract's method and path, served by the handler module `entry`. */
function served(route: RouteContract, entry: string): Pick<ApiRoute, "method" | "path" | "entry"> {
  return { method: route.method, path: route.path, entry };
}

export const API_ROUTES: readonly ApiRoute[] = [
  { ...served(ROUTES.createPipeline, "create-pipeline.ts"), access: { tables: { pipelines: RW } } },
  {
    ...served(ROUTES.listPipelines, "list-pipelines.ts"),
    access: { tables: { pipelines: R, updates: R } },
  },
  {
    ...served(ROUTES.getPipeline, "get-pipeline.ts"),
    access: { tables: { pipelines: R, updates: R, checkpoints: R, eventLog: R }, bucket: READ_TABLES },
  },
  { ...served(ROUTES.editPipeline, "edit-pipeline.ts"), access: { tables: { pipelines: RW } } },
  {
    ...served(ROUTES.deletePipeline, "delete-pipeline.ts"),
    access: { tables: { pipelines: RW }, bucket: { "tables/": RW } },
  },
  {
    ...served(ROUTES.stopPipeline, "stop-pipeline.ts"),
    // The "Update Canceled" event: its claim under state/, the update's outbox swept, the bus.
    access: {
      tables: { pipelines: RW, updates: RW, eventLog: RW },
      bucket: { "state/": RW },
      stateMachine: ["stop"],
      lifecycleEvents: true,
    },
  },
  {
    ...served(ROUTES.startUpdate, "start-update.ts"),
    // Writes under state/: a rewind's plan (rewind-plan-record.ts) and the lifecycle event's claim; a
    // branch (docs/branches.md) writes its logs under tables/, its checkpoint copies and its record.
    access: {
      ...STARTS_AN_UPDATE,
      tables: { ...STARTS_AN_UPDATE.tables, checkpoints: RW },
      bucket: { "tables/": RW, "state/": RW },
    },
  },
  {
    ...served(ROUTES.listUpdates, "list-updates.ts"),
    access: { tables: { pipelines: R, updates: R } },
  },
  {
    ...served(ROUTES.getUpdate, "get-update.ts"),
    access: { tables: { pipelines: R, updates: R, eventLog: R } },
  },
  {
    ...served(ROUTES.listEvents, "list-events.ts"),
    access: { tables: { pipelines: R, eventLog: R } },
  },
  {
    ...served(ROUTES.listDatasets, "list-datasets.ts"),
    access: { tables: { pipelines: R }, bucket: READ_TABLES },
  },
  {
    ...served(ROUTES.listBranches, "list-branches.ts"),
    access: { tables: { pipelines: R }, bucket: { "state/": R } },
  },
  {
    ...served(ROUTES.getBranch, "get-branch.ts"),
    access: { tables: { pipelines: R }, bucket: { "tables/": R, "state/": R } },
  },
  {
    ...served(ROUTES.branchDiff, "branch-diff.ts"),
    // Both sides' rows are read: the branch's log and live's, one table folder.
    access: { tables: { pipelines: R }, bucket: { "tables/": R, "state/": R } },
  },
  {
    ...served(ROUTES.publishBranch, "publish-branch.ts"),
    // Holds the pipeline as an update does; a RESTORE commit per table, live checkpoints, a point and an event.
    access: {
      tables: { pipelines: RW, checkpoints: RW, eventLog: RW },
      bucket: { "tables/": RW, "state/": RW },
    },
  },
  {
    ...served(ROUTES.discardBranch, "discard-branch.ts"),
    // The record, then each table's `_branches/<name>/` log.
    access: { tables: { pipelines: R }, bucket: { "tables/": RW, "state/": RW } },
  },
  {
    ...served(ROUTES.listRewindPoints, "list-rewind-points.ts"),
    // Each point's table versions are checked whole (restorable).
    access: { tables: { pipelines: R, eventLog: R }, bucket: READ_TABLES },
  },
  {
    ...served(ROUTES.rewindToCut, "rewind-to-cut.ts"),
    // Each pipeline's points and checkpoints are read and its rewind planned, then started as start-update does.
    access: STARTS_AN_UPDATE,
  },
  {
    ...served(ROUTES.startOrderedRun, "start-ordered-run.ts"),
    // Each pipeline read and checked, then the first one's update started as start-update does.
    access: STARTS_AN_UPDATE,
  },
  {
    ...served(ROUTES.captureRewindPoint, "capture-rewind-point.ts"),
    access: { tables: { pipelines: R, checkpoints: R, eventLog: RW }, bucket: READ_TABLES, heavy: true },
  },
  {
    ...served(ROUTES.getFlowState, "get-flow-state.ts"),
    // A rewind point's checkpoint (the event log), then its state version's files.
    access: {
      tables: { pipelines: R, checkpoints: R, eventLog: R },
      bucket: { "state/": R },
      heavy: true,
    },
  },
  { ...served(ROUTES.getTableHistory, "get-table-history.ts"), access: { bucket: READ_TABLES } },
  {
    ...served(ROUTES.listTableChanges, "list-table-changes.ts"),
    access: { bucket: READ_TABLES, heavy: true },
  },
  {
    ...served(ROUTES.queryTable, "query-table.ts"),
    access: { bucket: READ_TABLES, heavy: true },
  },
  {
    ...served(ROUTES.vacuumTable, "vacuum-table.ts"),
    // Reads the owner's live rewind points (the event log) and its flows' checkpoints to keep their
    // table and state files.
    access: {
      tables: { pipelines: R, checkpoints: R, eventLog: R },
      bucket: { "tables/": RW, "state/": RW },
      heavy: true,
    },
  },
  {
    ...served(ROUTES.findOnset, "find-onset.ts"),
    access: { bucket: READ_TABLES, heavy: true },
  },
  {
    ...served(ROUTES.optimizeTable, "optimize-table.ts"),
    access: { bucket: { "tables/": RW }, heavy: true },
  },
  {
    ...served(ROUTES.executeStatement, "execute-statement.ts"),
    // event_log('<id>') reads the pipeline and its events; the rest reads tables.
    access: {
      tables: { pipelines: R, eventLog: R },
      bucket: { "tables/": R, "statements/": RW },
      heavy: true,
    },
  },
  { ...served(ROUTES.getStatement, "get-statement.ts"), access: { bucket: { "statements/": R } } },
  {
    ...served(ROUTES.getStatementResultChunk, "get-statement-result-chunk.ts"),
    access: { bucket: { "statements/": R } },
  },
  { ...served(ROUTES.cancelStatement, "cancel-statement.ts"), access: { bucket: { "statements/": R } } },
  // The document is generated from the contracts in the handler's own code: it touches nothing.
  { ...served(ROUTES.getOpenApi, "get-openapi.ts"), access: {} },
];

/** The scheduled capture (EventBridge): every rewind-enabled pipeline. */
export const CAPTURE_SCHEDULE = {
  entry: "capture-rewind-points.ts",
  access: { tables: { pipelines: R, checkpoints: R, eventLog: RW }, bucket: READ_TABLES, heavy: true },
} as const satisfies { entry: string; access: FunctionAccess };
