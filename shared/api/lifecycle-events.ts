import { z } from "zod";

/**
 * Ebb's lifecycle events (docs/events.md): what people and systems outside a pipeline react to — an
 * update started, completed, failed (its execution lost too) or canceled, a rewind planned (dry run) or done, a full refresh, a
 * checkpoint reset. These zod schemas are the one source: they type the events the control plane
 * builds, and give the JSON Schema of each detail type (docs/events/*.schema.json, and the schema
 * registry's entries in the AWS construct). On AWS an event goes on an EventBridge bus; locally it is
 * POSTed to a webhook, in the same envelope.
 */

/** Every event's `source`. */
export const LIFECYCLE_EVENT_SOURCE = "ebb";

const isoTime = z.string().describe("ISO 8601, UTC");
const version = z.number().int().nonnegative();

/** What every detail carries: its own id (one per occurrence, the same on a retry) and its update. */
const common = {
  event_id: z
    .string()
    .describe(
      "`<update_id>:<kind>`: the same for every delivery of one occurrence, so a reader deduplicates on it",
    ),
  pipeline_id: z.string(),
  pipeline_name: z.string(),
  update_id: z.string(),
  time: isoTime,
};

/** What an update does, as a reader outside tells updates apart. */
export const UPDATE_KINDS = ["RUN", "VALIDATE", "REWIND", "REWIND_DRY_RUN", "PUBLISH"] as const;
const updateKind = z.enum(UPDATE_KINDS);

/** The rewind point a rewind targets: its id when the request named one (or the timestamp resolved to one). */
const rewindPoint = z.object({
  rewind_point_id: z.string().nullable(),
  timestamp: isoTime,
});

/** A cut across pipelines (POST /api/2.0/ebb/rewinds) rewinds each pipeline in its own update. */
const cutId = z
  .string()
  .nullable()
  .describe("the request_id of the cut across pipelines this rewind is part of, else null");

const rewoundTable = z.object({
  dataset: z.string(),
  table: z.string().describe("catalog.schema.table"),
  action: z.enum(["RESTORE", "TRUNCATE", "DROP"]),
  version: version.nullable().describe("the table version it is restored to; null when emptied or dropped"),
});

export const updateStartedDetail = z.object({
  ...common,
  update_kind: updateKind,
  cause: z.string(),
  definition_version: version,
  cut_id: cutId,
});

export const updateCompletedDetail = z.object({
  ...common,
  update_kind: updateKind,
  definition_version: version,
});

export const updateFailedDetail = z.object({
  ...common,
  update_kind: updateKind,
  definition_version: version,
  error_code: z.string().describe("docs/errors.md"),
  message: z.string(),
});

export const updateCanceledDetail = z.object({
  ...common,
  update_kind: updateKind,
  definition_version: version,
  message: z.string(),
});

export const rewindPlannedDetail = z.object({
  ...common,
  rewind_point: rewindPoint,
  tables: z.array(rewoundTable),
  cut_id: cutId,
});

export const rewindCompletedDetail = z.object({
  ...common,
  rewind_point: rewindPoint,
  tables: z.array(
    rewoundTable.extend({
      restore_commit_version: version
        .nullable()
        .describe("the commit that restored or emptied the table; null when it already was at the point"),
    }),
  ),
  cut_id: cutId,
});

export const fullRefreshDetail = z.object({
  ...common,
  refresh: z.enum(["FULL", "RESET"]).describe("FULL reprocesses from the sources' start; RESET empties only"),
  tables: z.array(
    z.object({
      dataset: z.string(),
      table: z.string(),
      how: z.enum(["DROP", "TRUNCATE", "OWNED_ROWS"]),
      version: version
        .nullable()
        .describe("the commit that emptied the table; null when dropped or empty already"),
    }),
  ),
});

export const checkpointResetDetail = z.object({
  ...common,
  flows: z.array(z.string()).describe("the flows whose checkpoint went back to the start"),
});

/** Each event's `detail-type`, with its detail's schema and its file name under docs/events/. */
export const LIFECYCLE_EVENTS = {
  "Update Started": { schema: updateStartedDetail, kind: "update-started" },
  "Update Completed": { schema: updateCompletedDetail, kind: "update-completed" },
  "Update Failed": { schema: updateFailedDetail, kind: "update-failed" },
  "Update Canceled": { schema: updateCanceledDetail, kind: "update-canceled" },
  "Rewind Planned": { schema: rewindPlannedDetail, kind: "rewind-planned" },
  "Rewind Completed": { schema: rewindCompletedDetail, kind: "rewind-completed" },
  "Full Refresh": { schema: fullRefreshDetail, kind: "full-refresh" },
  "Checkpoint Reset": { schema: checkpointResetDetail, kind: "checkpoint-reset" },
} as const;

export type LifecycleDetailType = keyof typeof LIFECYCLE_EVENTS;
export const LIFECYCLE_DETAIL_TYPES = Object.keys(LIFECYCLE_EVENTS) as LifecycleDetailType[];

export type LifecycleDetail<T extends LifecycleDetailType> = z.infer<(typeof LIFECYCLE_EVENTS)[T]["schema"]>;

/** One event: EventBridge's own fields for it, as a rule and a webhook see them. */
export type LifecycleEvent = {
  [T in LifecycleDetailType]: {
    readonly source: typeof LIFECYCLE_EVENT_SOURCE;
    readonly "detail-type": T;
    readonly detail: LifecycleDetail<T>;
  };
}[LifecycleDetailType];

/**
 * The JSON Schema (draft 4, what EventBridge's schema registry reads) of a whole event of one detail
 * type: the envelope a rule matches, with the detail's own schema.
 */
export function lifecycleEventJsonSchema(detailType: LifecycleDetailType): Record<string, unknown> {
  const detail = z.toJSONSchema(LIFECYCLE_EVENTS[detailType].schema, { target: "draft-4", io: "output" });
  delete detail["$schema"];
  return {
    $schema: "http://json-schema.org/draft-04/schema#",
    title: `${LIFECYCLE_EVENT_SOURCE}@${detailType.replaceAll(" ", "")}`,
    description: `Ebb lifecycle event "${detailType}" (docs/events.md)`,
    type: "object",
    properties: {
      source: { type: "string", enum: [LIFECYCLE_EVENT_SOURCE] },
      "detail-type": { type: "string", enum: [detailType] },
      detail,
    },
    required: ["source", "detail-type", "detail"],
  };
}
