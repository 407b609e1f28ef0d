import type { EventInfo } from "../api/types.ts";

/**
 * An update's data quality, per dataset and expectation: the `details.flow_progress.data_quality` of
 * its `flow_progress` events (one per batch or refresh) summed, as Databricks' data quality query
 * sums them. Pure, so the page and its test read the same numbers.
 */

export interface ExpectationSummary {
  readonly dataset: string;
  readonly name: string;
  readonly passed: number;
  readonly failed: number;
}

interface EventDataQuality {
  readonly expectations?: readonly {
    readonly name: string;
    readonly dataset: string;
    readonly passed_records: number;
    readonly failed_records: number;
  }[];
}

export function summarizeDataQuality(events: readonly EventInfo[]): ExpectationSummary[] {
  const byKey = new Map<string, ExpectationSummary>();
  for (const event of events) {
    if (event.event_type !== "flow_progress") continue;
    const progress = event.details["flow_progress"] as { data_quality?: EventDataQuality } | undefined;
    const quality = progress?.data_quality;
    if (!quality?.expectations) continue;
    for (const e of quality.expectations) {
      const key = JSON.stringify([e.dataset, e.name]);
      const before = byKey.get(key) ?? { dataset: e.dataset, name: e.name, passed: 0, failed: 0 };
      byKey.set(key, {
        ...before,
        passed: before.passed + e.passed_records,
        failed: before.failed + e.failed_records,
      });
    }
  }
  return [...byKey.values()].sort(
    (a, b) => a.dataset.localeCompare(b.dataset) || a.name.localeCompare(b.name),
  );
}
