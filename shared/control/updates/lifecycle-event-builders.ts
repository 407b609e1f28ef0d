import {
  LIFECYCLE_EVENT_SOURCE,
  LIFECYCLE_EVENTS,
  type LifecycleDetail,
  type LifecycleDetailType,
  type LifecycleEvent,
  type UPDATE_KINDS,
} from "../../api/lifecycle-events.ts";
import type { DatasetResetRecord } from "../../rewind/full-refresh-record.ts";
import type { UpdateError } from "../../store/updates-repository.ts";
import type { RewindPlanRecord } from "./rewind-plan-record.ts";

/**
 * The lifecycle events as data (pure): each built from what the step that emits it knows, and checked
 * against its schema as it is built. The event's id is its update's id and its kind, so every attempt
 * of a retried step builds the same id (publishOnce keeps it to one delivery).
 */

/** Whose event it is, and when. */
export interface EventOrigin {
  readonly pipelineId: string;
  readonly pipelineName: string;
  readonly updateId: string;
  /** Epoch ms. */
  readonly time: number;
}

type Event<T extends LifecycleDetailType> = Extract<LifecycleEvent, { "detail-type": T }>;
type OwnFields<T extends LifecycleDetailType> = Omit<
  LifecycleDetail<T>,
  "event_id" | "pipeline_id" | "pipeline_name" | "update_id" | "time"
>;

function lifecycleEvent<T extends LifecycleDetailType>(
  type: T,
  origin: EventOrigin,
  fields: OwnFields<T>,
): Event<T> {
  const detail = LIFECYCLE_EVENTS[type].schema.parse({
    event_id: `${origin.updateId}:${LIFECYCLE_EVENTS[type].kind}`,
    pipeline_id: origin.pipelineId,
    pipeline_name: origin.pipelineName,
    update_id: origin.updateId,
    time: new Date(origin.time).toISOString(),
    ...fields,
  });
  // The schema of `type` parsed it: the detail is `type`'s (TypeScript cannot follow the lookup).
  return { source: LIFECYCLE_EVENT_SOURCE, "detail-type": type, detail } as Event<T>;
}

interface UpdateFacts {
  readonly updateKind: (typeof UPDATE_KINDS)[number];
  readonly definitionVersion: number;
}

export function updateStarted(
  origin: EventOrigin,
  facts: UpdateFacts & { readonly cause: string; readonly cutId?: string | undefined },
) {
  return lifecycleEvent("Update Started", origin, {
    update_kind: facts.updateKind,
    cause: facts.cause,
    definition_version: facts.definitionVersion,
    cut_id: facts.cutId ?? null,
  });
}

export function updateCompleted(origin: EventOrigin, facts: UpdateFacts) {
  return lifecycleEvent("Update Completed", origin, {
    update_kind: facts.updateKind,
    definition_version: facts.definitionVersion,
  });
}

export function updateFailed(origin: EventOrigin, facts: UpdateFacts & { readonly error: UpdateError }) {
  return lifecycleEvent("Update Failed", origin, {
    update_kind: facts.updateKind,
    definition_version: facts.definitionVersion,
    error_code: facts.error.errorCode ?? "INTERNAL_ERROR",
    message: facts.error.message,
  });
}

/** Stopped through the API (`POST /pipelines/{id}/stop`). */
export function updateCanceled(origin: EventOrigin, facts: UpdateFacts & { readonly message: string }) {
  return lifecycleEvent("Update Canceled", origin, {
    update_kind: facts.updateKind,
    definition_version: facts.definitionVersion,
    message: facts.message,
  });
}

/** The point and the tables of a rewind's recorded plan. */
function rewindFields(plan: RewindPlanRecord) {
  return {
    rewind_point: {
      rewind_point_id: plan.rewindPointId ?? null,
      timestamp: new Date(plan.cut.time).toISOString(),
    },
    tables: plan.datasets.map((d) => ({
      dataset: d.dataset,
      table: d.identifier,
      action: d.action,
      version: d.targetVersion ?? null,
    })),
    cut_id: plan.cutId ?? null,
  };
}

/** A dry run: what a rewind to the point would do. */
export function rewindPlanned(origin: EventOrigin, plan: RewindPlanRecord) {
  return lifecycleEvent("Rewind Planned", origin, rewindFields(plan));
}

/** Done: each table at its version of the point; `commits` has the commit that did it, per dataset. */
export function rewindCompleted(
  origin: EventOrigin,
  plan: RewindPlanRecord,
  commits: ReadonlyMap<string, number>,
) {
  const fields = rewindFields(plan);
  return lifecycleEvent("Rewind Completed", origin, {
    ...fields,
    tables: fields.tables.map((t) => ({ ...t, restore_commit_version: commits.get(t.dataset) ?? null })),
  });
}

/** A full refresh (or a reset) of the datasets `resets` names, done before the update's run. */
export function fullRefresh(
  origin: EventOrigin,
  refresh: "FULL" | "RESET",
  resets: readonly (DatasetResetRecord & { readonly table: string })[],
) {
  return lifecycleEvent("Full Refresh", origin, {
    refresh,
    tables: resets.map((r) => ({
      dataset: r.dataset,
      table: r.table,
      how: r.how,
      version: r.tableVersion ?? null,
    })),
  });
}

export function checkpointReset(origin: EventOrigin, flows: readonly string[]) {
  return lifecycleEvent("Checkpoint Reset", origin, { flows: [...flows] });
}
