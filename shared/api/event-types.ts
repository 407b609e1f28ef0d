/**
 * Every `event_type` Ebb writes to a pipeline's event log (docs/api.md "Event log"): the UI's filter
 * offers these, and a unit test holds every type the code appends to this list.
 */
export const EVENT_LOG_TYPES = [
  "create_update",
  "update_progress",
  "flow_progress",
  "planning_information",
  "rewind_progress",
  "rewind_summary",
  "dataset_reset",
  "checkpoint_reset",
  "branch_published",
  "warning",
] as const;
export type EventLogType = (typeof EVENT_LOG_TYPES)[number];
