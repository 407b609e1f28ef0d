import type { DatasetRewind } from "../../rewind/rewind-plan.ts";

/**
 * One dataset of a rewind's plan as the API says it (a rewind's `planning_information` event, a cut's
 * answer): `action` RESTORE to `target_version`, or TRUNCATE / DROP a dataset the point does not know
 * (`target_version` null).
 */
export function plannedDatasetView(d: DatasetRewind) {
  return { dataset: d.identifier, action: d.action, target_version: d.targetVersion ?? null };
}
