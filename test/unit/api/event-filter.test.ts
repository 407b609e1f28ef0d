import { describe, expect, it } from "vitest";
import { matchesEventFilter, parseEventFilter } from "../../../shared/api/event-filter.ts";
import { parseEventOrder } from "../../../shared/api/event-order.ts";
import type { PipelineEvent } from "../../../shared/store/event-log-repository.ts";

describe("event-log filter", () => {
  it("reads the Databricks grammar and Ebb's fields, joined by AND", () => {
    const filter = parseEventFilter(
      "level in ('ERROR', 'warn') AND timestamp >= '2026-09-29T08:00:00Z' and timestamp < '2026-09-30T00:00:00Z' " +
        "AND event_type = 'rewind_summary' AND details.rewind_summary.dry_run = true " +
        "AND origin.update_id = 'U1' AND origin.dataset_name = 'orders'",
    );
    expect(filter).toEqual({
      levels: ["ERROR", "WARN"],
      range: { atOrAfter: Date.parse("2026-09-29T08:00:00Z"), before: Date.parse("2026-09-30T00:00:00Z") },
      eventTypes: ["rewind_summary"],
      dryRun: true,
      updateId: "U1",
      datasetName: "orders",
    });
  });

  it("takes level=, id=, event_type in, timestamp = and quoted quotes", () => {
    expect(parseEventFilter("level='INFO'").levels).toEqual(["INFO"]);
    expect(parseEventFilter("id = 'it''s'").id).toBe("it's");
    expect(parseEventFilter("event_type in ('warning','dataset_reset')").eventTypes).toEqual([
      "warning",
      "dataset_reset",
    ]);
    const at = Date.parse("2026-01-02T03:04:05Z");
    expect(parseEventFilter("timestamp = '2026-01-02 03:04:05'").range).toEqual({
      atOrAfter: at,
      atOrBefore: at,
    });
    expect(parseEventFilter("timestamp > '2026-01-02T03:04:05'").range).toEqual({ after: at });
    expect(parseEventFilter(undefined)).toEqual({ range: {} });
    expect(parseEventFilter("  ")).toEqual({ range: {} });
  });

  it.each([
    ["level = 'INFO' OR level = 'WARN'", "OR"],
    ["severity = 'INFO'", "severity"],
    ["level = 'LOUD'", "LOUD"],
    ["level > 'INFO'", ">"],
    ["origin.update_id in ('a')", "IN"],
    ["details.rewind_summary.dry_run = 'yes'", "true or false"],
    ["timestamp > 'yesterday'", "ISO-8601"],
    ["level = INFO", "quoted"],
    ["level = 'INFO", "not closed"],
    ["level = 'INFO' AND", "ends"],
    ["level = 'INFO' AND level = 'WARN'", "twice"],
    ["level ; 'INFO'", ";"],
  ])("refuses %s, naming the part not understood", (filter, named) => {
    expect(() => parseEventFilter(filter)).toThrow(
      expect.objectContaining({ errorCode: "INVALID_PARAMETER_VALUE" }),
    );
    expect(() => parseEventFilter(filter)).toThrow(named);
  });

  it("matches events on every part", () => {
    const event: PipelineEvent = {
      id: "E1",
      sequence: { control_plane_seq_no: 1 },
      origin: { pipeline_id: "p", pipeline_name: "n", update_id: "U1", dataset_name: "orders" },
      timestamp: "2026-09-29T08:30:00.000Z",
      message: "m",
      level: "INFO",
      maturity_level: "STABLE",
      event_type: "rewind_summary",
      details: { rewind_summary: { dry_run: true } },
    };
    expect(
      matchesEventFilter(event, parseEventFilter("details.rewind_summary.dry_run = true AND level = 'INFO'")),
    ).toBe(true);
    expect(matchesEventFilter(event, parseEventFilter("details.rewind_summary.dry_run = false"))).toBe(false);
    expect(matchesEventFilter(event, parseEventFilter("timestamp > '2026-09-29T08:30:00Z'"))).toBe(false);
    expect(matchesEventFilter(event, parseEventFilter("timestamp >= '2026-09-29T08:30:00Z'"))).toBe(true);
    expect(matchesEventFilter(event, parseEventFilter("origin.dataset_name = 'other'"))).toBe(false);
  });
});

describe("event-log order_by", () => {
  it("defaults to newest first and takes a string or a one-element list", () => {
    expect(parseEventOrder(undefined)).toBe("desc");
    expect(parseEventOrder("timestamp asc")).toBe("asc");
    expect(parseEventOrder("TIMESTAMP DESC")).toBe("desc");
    expect(parseEventOrder('["timestamp asc"]')).toBe("asc");
    expect(parseEventOrder(["timestamp asc"])).toBe("asc");
  });

  it("asks for a direction when order_by names only the column", () => {
    expect(() => parseEventOrder("timestamp")).toThrow('"timestamp" has no direction');
  });

  it.each([["level asc"], ['["timestamp asc", "timestamp desc"]'], ["timestamp sideways"], ["[oops"]])(
    "refuses %s",
    (order) => {
      expect(() => parseEventOrder(order)).toThrow(
        expect.objectContaining({ errorCode: "INVALID_PARAMETER_VALUE" }),
      );
    },
  );
});
