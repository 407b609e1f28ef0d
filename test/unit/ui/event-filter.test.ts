import { describe, expect, it } from "vitest";
import { EMPTY_FILTER, eventFilter } from "../../../ui/src/pipeline/event-filter.ts";
import { parseEventFilter } from "../../../shared/api/event-filter.ts";

/** The event log form writes filters in the API's grammar: the API's own parser reads each one back. */
describe("the UI's event-log filter", () => {
  it("is absent for an empty form", () => {
    expect(eventFilter(EMPTY_FILTER)).toBeUndefined();
  });

  it("joins each field with AND, quoting values", () => {
    const filter = eventFilter({
      levels: ["ERROR", "WARN"],
      eventType: "flow_progress",
      dataset: "o'rders",
      updateId: " 01ABC ",
      after: "2026-12-01T08:00:00.000Z",
    });
    expect(filter).toBe(
      "level in ('ERROR', 'WARN') AND event_type = 'flow_progress' AND origin.dataset_name = 'o''rders' AND origin.update_id = '01ABC' AND timestamp >= '2026-12-01T08:00:00.000Z'",
    );
  });

  it("writes only filters the API's parser accepts", () => {
    for (const form of [
      { ...EMPTY_FILTER, levels: ["INFO"] },
      { ...EMPTY_FILTER, levels: ["ERROR", "METRICS"], eventType: "rewind_summary" },
      { ...EMPTY_FILTER, dataset: "orders", updateId: "u1", after: "2026-12-01T08:00:00.000Z" },
    ]) {
      expect(() => parseEventFilter(eventFilter(form)!)).not.toThrow();
    }
  });
});
