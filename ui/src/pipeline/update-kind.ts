import type { Update } from "../api/types.ts";

/** What an update did, in a few words, from the fields its request set (api.md "Updates"). */
export function updateKind(update: Update): string {
  if (update.rewind_spec) {
    if (update.rewind_spec.dry_run) return "Rewind dry run";
    return update.cut ? "Rewind to a cut" : "Rewind";
  }
  if (update.validate_only) return "Validate";
  if (update.ordered_run) return `Run ${update.ordered_run.position} of ${update.ordered_run.of} in order`;
  if (update.full_refresh) return "Full refresh";
  if (update.full_refresh_selection?.length)
    return `Full refresh of ${update.full_refresh_selection.join(", ")}`;
  if (update.refresh_selection?.length) return `Refresh of ${update.refresh_selection.join(", ")}`;
  if (update.refresh) return `Refresh ${update.refresh.toLowerCase()}`;
  return "Run";
}

/** A rewind's dry run (the wizard's preview makes one each time): listed only when asked for. */
export function isDryRun(update: Update): boolean {
  return update.rewind_spec?.dry_run ?? false;
}

/** The update that left the pipeline rewound with replay pending: the newest finished one is a rewind. */
export function pendingReplay(updates: readonly Update[]): Update | undefined {
  const last = updates.find((u) => !isDryRun(u) && u.state !== "CANCELED");
  return last?.rewind_spec && last.state === "COMPLETED" ? last : undefined;
}

export function duration(update: Update, now: number): number | undefined {
  const end =
    update.end_time ?? (["COMPLETED", "FAILED", "CANCELED"].includes(update.state) ? undefined : now);
  return end === undefined ? undefined : end - update.creation_time;
}
