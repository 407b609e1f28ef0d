import { z } from "zod";
import { RESET_MODES } from "../../pipeline/definition-schema.ts";
import { SELECTION_FIELDS, type RefreshRequest } from "../../rewind/refresh-request.ts";
import { rewindDatasetSpecSchema, type RewindTarget } from "../../rewind/rewind-spec.ts";
import type { UpdateRecord } from "../../store/updates-repository.ts";
import { BATCH_ENGINES } from "../../pipeline/batch-engines.ts";
import type { UPDATE_KINDS } from "../../api/lifecycle-events.ts";

/**
 * What an update does, parsed once from its request by start-update and kept on the update record:
 * every later step (and every look back at past updates) reads this, never the raw request again.
 * A rewind's own plan is kept beside it (rewind-plan-record.ts).
 */

export const REFRESH_FIELDS = [
  "full_refresh",
  "full_refresh_selection",
  "refresh_selection",
  "reset_checkpoint_selection",
  "refresh",
  "selection",
  "reset_mode",
] as const;

/** The refresh fields that were set (a `false` full_refresh is the same as none). */
export function refreshFieldsOf(request: Readonly<Record<string, unknown>>): Record<string, unknown> {
  return Object.fromEntries(
    REFRESH_FIELDS.flatMap((field) =>
      request[field] === undefined || request[field] === false ? [] : [[field, request[field]]],
    ),
  );
}

const names = z.array(z.string()).readonly();

const refreshSchema = z.object({
  reset: z
    .object({
      mode: z.enum(["FULL", "RESET"]),
      names: names.optional(),
      field: z.enum(SELECTION_FIELDS).optional(),
    })
    .optional(),
  incremental: names.optional(),
  incrementalField: z.enum(SELECTION_FIELDS).optional(),
  onlySelected: z.boolean(),
  checkpointReset: names.optional(),
  resetModeOverride: z.enum(RESET_MODES).optional(),
}) satisfies z.ZodType<RefreshRequest>;

const rewindTargetSchema = z.discriminatedUnion("kind", [
  z.object({ kind: z.literal("point"), rewindPointId: z.string() }),
  z.object({ kind: z.literal("timestamp"), text: z.string(), time: z.number() }),
]) satisfies z.ZodType<RewindTarget>;

/** Where an update stands in an ordered run (control/runs/ordered-run.ts). */
export const orderedRunStepSchema = z.object({
  requestId: z.string(),
  /** 1-based, of `of`. */
  position: z.number(),
  of: z.number(),
  /** The pipelines still to run, in order. */
  next: z.array(z.string()).readonly(),
  fullRefresh: z.boolean(),
});
export type OrderedRunStep = z.infer<typeof orderedRunStepSchema>;

/** An ordered run's step as the event log and the API say it (`ordered_run`). */
export function orderedRunDetails(step: OrderedRunStep) {
  return { request_id: step.requestId, position: step.position, of: step.of };
}

export const updateIntentSchema = z.discriminatedUnion("kind", [
  z.object({
    kind: z.literal("rewind"),
    dryRun: z.boolean(),
    target: rewindTargetSchema,
    /** Undefined: every dataset. */
    datasets: z.array(rewindDatasetSpecSchema).readonly().optional(),
    /** The request id of the cut across pipelines this rewind is one of (control/rewinds/cut-rewind.ts). */
    cutRequestId: z.string().optional(),
  }),
  z.object({
    kind: z.literal("run"),
    refresh: refreshSchema,
    validateOnly: z.boolean(),
    /** A continuous pipeline's run: its levels run again each trigger until stopped. */
    continuous: z.boolean(),
    /** One run of an ordered run of several pipelines: the pipelines after it start when it completes. */
    orderedRun: orderedRunStepSchema.optional(),
    /** The engine of every batch of this update (the request's `engine`), over `pipelines.engine`. */
    engine: z.enum(BATCH_ENGINES).optional(),
    /** The branch the run replays on (docs/branches.md): its tables, checkpoints and state, not live's. */
    branch: z.string().optional(),
  }),
  z.object({
    /** A branch published to live (control/branches/publish-branch.ts): its plan is recorded beside. */
    kind: z.literal("publish"),
    branch: z.string(),
  }),
]);
export type UpdateIntent = z.infer<typeof updateIntentSchema>;

/** The intent start-update recorded on `update` (parsed, not cast). */
export function intentOf(update: UpdateRecord): UpdateIntent {
  return updateIntentSchema.parse(update.intent);
}

/** A run that only validated the definition: it read and wrote no table. */
export function isValidation(intent: UpdateIntent): boolean {
  return intent.kind === "run" && intent.validateOnly;
}

/** What an update does, as readers outside the pipeline tell updates apart (docs/events.md). */
export function updateKindOf(intent: UpdateIntent): (typeof UPDATE_KINDS)[number] {
  if (intent.kind === "rewind") return intent.dryRun ? "REWIND_DRY_RUN" : "REWIND";
  if (intent.kind === "publish") return "PUBLISH";
  return intent.validateOnly ? "VALIDATE" : "RUN";
}
