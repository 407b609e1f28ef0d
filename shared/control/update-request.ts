import { parseRefreshRequest, type RefreshRequest } from "../rewind/refresh-request.ts";
import { parseRewindSpec, type RewindSpec } from "../rewind/rewind-spec.ts";
import type { UpdateRecord } from "../store/updates-repository.ts";

/**
 * An update's request as start-update recorded it, read back by the state machine's tasks: either a
 * rewind (its `rewind_spec`) or a run (its refresh fields). Each task re-reads it from the Updates
 * table, so execution payloads carry ids only.
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

export type UpdateIntent =
  | { readonly kind: "rewind"; readonly spec: RewindSpec }
  | { readonly kind: "run"; readonly refresh: RefreshRequest; readonly validateOnly: boolean };

/** What the recorded request asks for. `now` bounds a rewind timestamp (it was checked at start). */
export function intentOf(update: UpdateRecord, now: number): UpdateIntent {
  const request = update.request;
  if (request["rewind_spec"] !== undefined) {
    return { kind: "rewind", spec: parseRewindSpec(request["rewind_spec"], Math.max(now, update.createdAt)) };
  }
  return {
    kind: "run",
    refresh: parseRefreshRequest(refreshFieldsOf(request)),
    validateOnly: request["validate_only"] === true,
  };
}
