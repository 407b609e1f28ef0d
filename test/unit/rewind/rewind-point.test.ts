import { describe, expect, it } from "vitest";
import type { PipelineEvent } from "../../../shared/store/event-log-repository.ts";
import {
  PERIODIC_MESSAGE,
  readRewindPoint,
  rewindSummaryEvent,
} from "../../../shared/rewind/rewind-point.ts";

const cut = {
  time: Date.parse("2026-09-29T08:00:00Z"),
  datasets: new Map([
    ["raw", { version: 4, tableId: "t-raw" }],
    ["totals", { version: 2, tableId: "t-totals" }],
  ]),
  flows: new Map([["ingest", 4]]),
};

function stored(
  input: ReturnType<typeof rewindSummaryEvent>,
  id = "01JABCDEFGHJKMNPQRSTVWXYZ0",
): PipelineEvent {
  return {
    id,
    sequence: { control_plane_seq_no: 1 },
    origin: { pipeline_id: "p", pipeline_name: "P", update_id: input.updateId ?? "" },
    timestamp: new Date(input.timestamp).toISOString(),
    message: input.message,
    level: input.level,
    maturity_level: "STABLE",
    event_type: input.event_type,
    details: input.details,
  };
}

describe("rewind summary events", () => {
  it("record a periodic point in the Databricks shape, kept for the retention", () => {
    const event = rewindSummaryEvent({
      catalog: "main",
      schema: "s",
      kind: "periodic",
      cut,
      now: cut.time + 5,
      retentionMs: 1000,
    });
    expect(event).toMatchObject({
      event_type: "rewind_summary",
      level: "INFO",
      message: PERIODIC_MESSAGE,
      retentionMs: 1000,
    });
    expect(event.details).toEqual({
      rewind_summary: {
        dry_run: true,
        timestamp: "2026-09-29T08:00:00.000Z",
        datasets: [
          { identifier: "main.s.raw", table_version: 4, table_id: "t-raw" },
          { identifier: "main.s.totals", table_version: 2, table_id: "t-totals" },
        ],
        flows: [{ flow: "ingest", seq: 4 }],
      },
    });
  });

  it("read back as the same cut, expiring a retention after the event", () => {
    const event = stored(
      rewindSummaryEvent({
        catalog: "main",
        schema: "s",
        kind: "dry-run",
        cut,
        now: cut.time,
        retentionMs: 1000,
      }),
    );
    const point = readRewindPoint(event, 7000)!;
    expect(point.cut).toEqual(cut);
    expect(point.expiresAt).toBe(cut.time + 7000);
    expect(point.rewindPointId).toBe(event.id);
  });

  it("are not points when they record a finished rewind (dry_run false) or are something else", () => {
    const done = stored(
      rewindSummaryEvent({
        catalog: "main",
        schema: "s",
        kind: "rewind",
        cut,
        now: cut.time,
        retentionMs: 1000,
      }),
    );
    expect((done.details["rewind_summary"] as { dry_run: boolean }).dry_run).toBe(false);
    expect(readRewindPoint(done, 1000)).toBeUndefined();
    expect(readRewindPoint({ ...done, event_type: "flow_progress" }, 1000)).toBeUndefined();
    expect(
      readRewindPoint({ ...done, details: { rewind_summary: { dry_run: true } } }, 1000),
    ).toBeUndefined();
  });
});
