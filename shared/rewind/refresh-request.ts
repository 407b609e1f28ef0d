import { z } from "zod";
import { definitionErrorMap, toDefinitionIssues } from "../pipeline/definition-messages.ts";
import { RESET_MODES, type ResetMode } from "../pipeline/definition-schema.ts";
import { caseInsensitiveEnum, strictObject } from "../pipeline/strict-object.ts";
import { InvalidParameterError } from "../errors/coded-error.ts";
import { RefreshSelectionOverlapError } from "./errors.ts";

/**
 * The refresh and reset fields of a start-update request (semantics.md "Refresh and reset"; api.md
 * "Updates"), normalized into one form. The zod shape is exported so the API's whole-body schema can
 * spread it; `parseRefreshRequest` adds the rules between fields, each an `INVALID_PARAMETER_VALUE`
 * that says what to send instead.
 */

export const REFRESH_MODES = ["INCREMENTAL", "FULL", "RESET"] as const;
export type RefreshMode = (typeof REFRESH_MODES)[number];

const names = z
  .array(z.string().trim().min(1))
  .min(1, { error: "needs at least one name (leave it out for all)" });

export const refreshRequestShape = {
  refresh: caseInsensitiveEnum(REFRESH_MODES, (v) => v.toUpperCase()).optional(),
  full_refresh: z.boolean().optional(),
  full_refresh_selection: names.optional(),
  refresh_selection: names.optional(),
  selection: names.optional(),
  reset_checkpoint_selection: names.optional(),
  reset_mode: caseInsensitiveEnum(RESET_MODES, (v) => v.toUpperCase()).optional(),
};

export const refreshRequestSchema = strictObject(refreshRequestShape);
export type RefreshRequestInput = z.input<typeof refreshRequestSchema>;

/** What the run does, whichever request fields said it. */
export interface RefreshRequest {
  /** Datasets or flows reset and reprocessed (FULL), or only reset (RESET); undefined = all. */
  readonly reset?: {
    readonly mode: "FULL" | "RESET";
    readonly names?: readonly string[];
    /** The request's field that named them, which an unknown name's error names. */
    readonly field?: SelectionField;
  };
  /** Datasets or flows run incrementally besides those refreshed FULL; undefined = all (when no other selection). */
  readonly incremental?: readonly string[];
  /** The request's field that named `incremental`. */
  readonly incrementalField?: SelectionField;
  /** Nothing else is run (a selection was given and these are all it named). */
  readonly onlySelected: boolean;
  /** Flows (or datasets, meaning their flows) whose checkpoints alone are reset. */
  readonly checkpointReset?: readonly string[];
  readonly resetModeOverride?: ResetMode;
}

/** The request fields that name datasets or flows. */
export const SELECTION_FIELDS = [
  "selection",
  "full_refresh_selection",
  "refresh_selection",
  "reset_checkpoint_selection",
] as const;
export type SelectionField = (typeof SELECTION_FIELDS)[number];

export function parseRefreshRequest(input: unknown): RefreshRequest {
  const parsed = refreshRequestSchema.safeParse(input ?? {}, { error: definitionErrorMap });
  if (!parsed.success) {
    const issues = toDefinitionIssues(parsed.error.issues).map((i) =>
      i.path ? `${i.path}: ${i.message}` : i.message,
    );
    throw new InvalidParameterError(issues.join("; "), { data: { issues } });
  }
  const request = parsed.data;
  const refuse = (message: string): never => {
    throw new InvalidParameterError(message);
  };
  const databricksSelection = request.full_refresh_selection ?? request.refresh_selection;
  if (request.selection && databricksSelection) {
    refuse("send either selection (with refresh) or full_refresh_selection / refresh_selection, not both");
  }
  if (request.full_refresh === true && request.full_refresh_selection) {
    refuse(
      "full_refresh: true already refreshes every dataset: leave out full_refresh_selection, or set full_refresh: false",
    );
  }
  if (request.full_refresh === true && request.refresh !== undefined && request.refresh !== "FULL") {
    refuse(`full_refresh: true contradicts refresh: ${request.refresh}; send only one of them`);
  }
  if (request.refresh !== undefined && databricksSelection) {
    refuse(
      "refresh applies to selection; full_refresh_selection and refresh_selection already say how each dataset runs: use selection with refresh, or leave refresh out",
    );
  }
  const fullRefreshed = new Set(request.full_refresh_selection);
  const both = [...new Set(request.refresh_selection?.filter((name) => fullRefreshed.has(name)))];
  if (both.length > 0) throw new RefreshSelectionOverlapError(both);
  const mode: RefreshMode =
    request.full_refresh === true || request.full_refresh_selection
      ? "FULL"
      : (request.refresh ?? "INCREMENTAL");
  if (request.reset_mode !== undefined && mode === "INCREMENTAL") {
    refuse(`reset_mode ${request.reset_mode} needs refresh FULL or RESET: an incremental run resets nothing`);
  }
  if (mode === "RESET" && request.reset_checkpoint_selection) {
    refuse(
      "refresh: RESET already resets the checkpoints of what it resets: leave out reset_checkpoint_selection",
    );
  }

  const override = request.reset_mode !== undefined ? { resetModeOverride: request.reset_mode } : {};
  const checkpointReset = request.reset_checkpoint_selection
    ? { checkpointReset: request.reset_checkpoint_selection }
    : {};
  if (request.full_refresh_selection || request.refresh_selection) {
    return {
      ...(request.full_refresh_selection
        ? {
            reset: {
              mode: "FULL",
              names: request.full_refresh_selection,
              field: "full_refresh_selection",
            },
          }
        : {}),
      ...(request.refresh_selection
        ? { incremental: request.refresh_selection, incrementalField: "refresh_selection" }
        : {}),
      onlySelected: true,
      ...checkpointReset,
      ...override,
    };
  }
  const selection = request.selection ? { names: request.selection, field: "selection" as const } : {};
  if (mode === "INCREMENTAL") {
    return {
      ...(request.selection ? { incremental: request.selection } : {}),
      onlySelected: request.selection !== undefined,
      ...checkpointReset,
    };
  }
  return {
    reset: { mode, ...selection },
    onlySelected: request.selection !== undefined,
    ...checkpointReset,
    ...override,
  };
}
