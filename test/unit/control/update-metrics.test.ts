import { describe, expect, it } from "vitest";
import { requestMetricsOf } from "../../../shared/control/metrics/request-metrics.ts";
import { rewindIncompleteMetrics, updateMetricsOf } from "../../../shared/control/metrics/update-metrics.ts";
import type { NewEvent } from "../../../shared/store/event-log-repository.ts";
import { timeOrderedId } from "../../../shared/store/time-ordered-id.ts";

/** The metrics read off an update's events and a request's outcome (operations.md "Metrics"). */
const started = Date.UTC(2026, 0, 1);
const updateId = timeOrderedId(started);
const event = (
  event_type: string,
  details: Record<string, unknown>,
  timestamp = started + 5_000,
): NewEvent => ({
  origin: { pipeline_id: "p1", pipeline_name: "orders", update_id: updateId },
  message: "",
  level: "INFO",
  event_type,
  details: { [event_type]: details },
  timestamp,
});

describe("update metrics", () => {
  it("count a FAILED update and its duration from the update's creation, by pipeline and in total", () => {
    expect(updateMetricsOf(event("update_progress", { state: "FAILED" }))).toEqual([
      {
        dimensions: { pipeline_id: "p1" },
        dimensionSets: [[], ["pipeline_id"]],
        metrics: [
          { name: "UpdatesFailed", unit: "Count", value: 1 },
          { name: "UpdateDuration", unit: "Milliseconds", value: 5_000 },
        ],
        properties: { update_id: updateId },
      },
    ]);
  });

  it("count nothing for a state on the way, a hand-over, a dry run or a flow's plain status", () => {
    expect(updateMetricsOf(event("update_progress", { state: "RUNNING" }))).toEqual([]);
    expect(updateMetricsOf(event("update_progress", { state: "RUNNING", execution: "x" }))).toEqual([]);
    expect(updateMetricsOf(event("rewind_summary", { dry_run: true }))).toEqual([]);
    expect(updateMetricsOf({ ...event("flow_progress", { status: "COMPLETED" }) })).toEqual([]);
    expect(updateMetricsOf(event("rewind_summary", { dry_run: false }))[0]?.metrics).toEqual([
      { name: "Rewinds", unit: "Count", value: 1 },
    ]);
  });

  it("name a rewind left incomplete, for the construct's RewindIncomplete alarm", () => {
    expect(rewindIncompleteMetrics("p1", updateId)[0]?.metrics).toEqual([
      { name: "RewindsIncomplete", unit: "Count", value: 1 },
    ]);
  });
});

describe("request metrics", () => {
  it("count an INTERNAL_ERROR as a 5xx by its code, and every request by route", () => {
    const groups = requestMetricsOf({
      method: "POST",
      route: "/api/2.0/pipelines",
      status: 500,
      durationMs: 12,
      errorCode: "INTERNAL_ERROR",
      requestId: "r1",
    });
    expect(groups.map((group) => [group.dimensions, group.metrics.map((m) => [m.name, m.value])])).toEqual([
      [
        { route: "POST /api/2.0/pipelines" },
        [
          ["Requests", 1],
          ["RequestLatency", 12],
        ],
      ],
      [{ error_code: "INTERNAL_ERROR" }, [["Requests5xx", 1]]],
    ]);
  });
});
