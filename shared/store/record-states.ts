/**
 * The states and levels the store's records take, on their own (no I/O, no Node): the repositories
 * use them, and the API's response schemas (shared/api/response-schemas.ts), which the web UI compiles
 * against, describe them.
 */

/** Databricks' `UpdateInfo` states (api.md); updates-repository.ts says which are final. */
export const UPDATE_STATES = [
  "QUEUED",
  "CREATED",
  "WAITING_FOR_RESOURCES",
  "INITIALIZING",
  "RESETTING",
  "SETTING_UP_TABLES",
  "RUNNING",
  "STOPPING",
  "COMPLETED",
  "FAILED",
  "CANCELED",
] as const;

/** Databricks' pipeline states (api.md `GET /api/2.0/pipelines/{id}`). */
export const PIPELINE_STATES = [
  "IDLE",
  "STARTING",
  "RUNNING",
  "STOPPING",
  "RESETTING",
  "FAILED",
  "DELETED",
] as const;

/** An event's level and maturity, as Databricks' event log has them. */
export const EVENT_LEVELS = ["INFO", "WARN", "ERROR", "METRICS"] as const;
export const MATURITY_LEVELS = ["STABLE", "EVOLVING", "DEPRECATED"] as const;
