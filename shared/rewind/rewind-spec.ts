import { z } from "zod";
import { definitionErrorMap, toDefinitionIssues } from "../pipeline/definition-messages.ts";
import { strictObject } from "../pipeline/strict-object.ts";
import { parseTimestamp } from "../pipeline/timestamp.ts";
import {
  InvalidRewindTimestampError,
  MissingRewindTargetError,
  MultipleRewindTargetsError,
} from "./errors.ts";
import { InvalidParameterError } from "../errors/coded-error.ts";

/**
 * The `rewind_spec` of a start-update request (semantics.md "Rewind request"; api.md "Updates"): the
 * zod schema is the single source of its type; `parseRewindSpec` adds the rules across fields and
 * against the clock, each with its own error code. These checks need no storage, so start-update runs
 * them synchronously and an invalid spec never starts an update.
 */

/** How a rewind empties a dataset that has no table version at its target. */
export const NOT_IN_POINT_MODES = ["TRUNCATE", "DROP"] as const;
export type NotInPointMode = (typeof NOT_IN_POINT_MODES)[number];

export const rewindDatasetSpecSchema = strictObject({
  /** `catalog.schema.table` (the pipeline's own catalog and schema). */
  identifier: z.string().trim().min(1),
  /** Also rewind every dataset downstream of this one. Required, as in Databricks' API. */
  cascade: z.boolean(),
  /** Move the writing flows' HEAD to their checkpoints at the point (offsets and state together). */
  reset_checkpoints: z.boolean().default(true),
});

export const rewindSpecSchema = strictObject({
  rewind_point_id: z.string().trim().min(1).optional(),
  /** UTC `yyyy-MM-dd HH:mm:ss`, or ISO-8601 with `T` and `Z`. */
  rewind_timestamp: z.string().optional(),
  /** Omitted: every dataset, each with cascade and reset_checkpoints. */
  datasets: z.array(rewindDatasetSpecSchema).min(1).optional(),
  dry_run: z.boolean().default(false),
  /**
   * Make a branch of this name at the target instead of moving the live tables (docs/branches.md).
   * Checked by the branches module (its name rules and its own error codes).
   */
  branch: z.string().optional(),
  /**
   * What happens to a rewound dataset the target does not know (a deploy since added it, or it had
   * not run yet): TRUNCATE empties it in one commit (table id and history stay, so a later rewind
   * can still restore its old versions), DROP deletes its table (recreated, with a new id, on
   * replay). Either way its flows start again from the root.
   */
  not_in_point_mode: z
    .string()
    .transform((value) => value.trim().toUpperCase())
    .pipe(z.enum(NOT_IN_POINT_MODES))
    .default("TRUNCATE"),
});

export type RewindSpecInput = z.input<typeof rewindSpecSchema>;
export type RewindDatasetSpec = z.infer<typeof rewindDatasetSpecSchema>;

export type RewindTarget =
  | { readonly kind: "point"; readonly rewindPointId: string }
  | { readonly kind: "timestamp"; readonly text: string; readonly time: number };

/** A `rewind_spec` that passed every check that needs no storage. */
export interface RewindSpec {
  readonly target: RewindTarget;
  /** Undefined: every dataset, with cascade and reset_checkpoints. */
  readonly datasets?: readonly RewindDatasetSpec[];
  readonly dryRun: boolean;
  /** How a rewound dataset with no table version at the target is emptied. */
  readonly notInPointMode: NotInPointMode;
  /** A branch to make at the target, live left as it is (docs/branches.md). */
  readonly branch?: string;
}

/** ISO-8601 is accepted only in UTC (`Z`); the space form is UTC by definition. */
const ISO_UTC = /T[^+]*Z$/;

/**
 * Parses a `rewind_spec` value. Structure errors (unknown fields, wrong types) are
 * `INVALID_PARAMETER_VALUE`; both targets `MULTIPLE_REWIND_TARGETS`; neither
 * `MISSING_REWIND_TARGET`; a timestamp in no accepted form or after `now` `INVALID_TIMESTAMP`.
 */
export function parseRewindSpec(input: unknown, now: number): RewindSpec {
  const parsed = rewindSpecSchema.safeParse(input, { error: definitionErrorMap });
  if (!parsed.success) {
    const issues = toDefinitionIssues(parsed.error.issues).map((issue) =>
      issue.path ? `rewind_spec.${issue.path}: ${issue.message}` : `rewind_spec: ${issue.message}`,
    );
    throw new InvalidParameterError(issues.join("; "), { data: { issues } });
  }
  const spec = parsed.data;
  const pointId = spec.rewind_point_id;
  const timestamp = spec.rewind_timestamp;
  if (pointId !== undefined && timestamp !== undefined) throw new MultipleRewindTargetsError();
  if (pointId === undefined && timestamp === undefined) throw new MissingRewindTargetError();
  const datasets = {
    ...(spec.datasets ? { datasets: spec.datasets } : {}),
    notInPointMode: spec.not_in_point_mode,
    ...(spec.branch !== undefined ? { branch: spec.branch } : {}),
  };
  if (pointId !== undefined) {
    return { target: { kind: "point", rewindPointId: pointId }, ...datasets, dryRun: spec.dry_run };
  }
  const text = (timestamp as string).trim();
  const time = text.includes("T") && !ISO_UTC.test(text) ? undefined : parseTimestamp(text);
  if (time === undefined) throw new InvalidRewindTimestampError(text, "format");
  if (time > now) throw new InvalidRewindTimestampError(text, "future");
  return { target: { kind: "timestamp", text, time }, ...datasets, dryRun: spec.dry_run };
}
