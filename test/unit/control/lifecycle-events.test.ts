import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { eventSchemaFile, eventSchemaText } from "../../../infra/aws/event-schema-files.ts";
import { LIFECYCLE_DETAIL_TYPES, type LifecycleEvent } from "../../../shared/api/lifecycle-events.ts";
import {
  checkpointReset,
  fullRefresh,
  rewindCompleted,
  rewindPlanned,
  updateCompleted,
  updateCanceled,
  updateFailed,
  updateStarted,
} from "../../../shared/control/updates/lifecycle-event-builders.ts";
import {
  lifecycleEventKey,
  publishOnce,
  resendUndelivered,
} from "../../../shared/control/plane/lifecycle-events.ts";
import { InjectedCrashError } from "../../../shared/engine/errors.ts";
import type { RewindPlanRecord } from "../../../shared/control/updates/rewind-plan-record.ts";
import { MemoryObjectStore } from "../../../shared/object-store/memory-object-store.ts";
import { schemaErrors } from "../../support/lifecycle-event-schemas.ts";

// Each lifecycle event as the steps build it (docs/events.md), against the JSON Schema the repository
// publishes for it; and once per occurrence however often its step runs.

const origin = {
  pipelineId: "p-1",
  pipelineName: "orders",
  updateId: "u-1",
  time: Date.UTC(2026, 11, 6, 12),
};
const TIME = "2026-12-06T12:00:00.000Z";

const plan: RewindPlanRecord = {
  dryRun: false,
  rewindPointId: "rp-7",
  cutId: "cut-3",
  cut: {
    time: Date.UTC(2026, 11, 5),
    datasets: new Map([["raw", { version: 4, tableId: "t" }]]),
    flows: new Map(),
  },
  datasets: [
    {
      dataset: "raw",
      identifier: "main.shop.raw",
      action: "RESTORE",
      targetVersion: 4,
      resetCheckpoints: true,
      flows: [],
    },
    { dataset: "late", identifier: "main.shop.late", action: "TRUNCATE", resetCheckpoints: true, flows: [] },
  ],
  views: [],
  stateDrift: [],
};

function valid<E extends LifecycleEvent>(event: E): E["detail"] {
  expect(event.source).toBe("ebb");
  expect(schemaErrors(event), event["detail-type"]).toEqual([]);
  expect(event.detail).toMatchObject({
    pipeline_id: "p-1",
    pipeline_name: "orders",
    update_id: "u-1",
    time: TIME,
  });
  return event.detail;
}

describe("lifecycle events", () => {
  it("Update Started: the kind of update, its cause and definition version, and the cut it is part of", () => {
    const detail = valid(
      updateStarted(origin, {
        updateKind: "REWIND",
        cause: "USER_ACTION",
        definitionVersion: 3,
        cutId: "cut-3",
      }),
    );
    expect(detail).toMatchObject({ event_id: "u-1:update-started", update_kind: "REWIND", cut_id: "cut-3" });
    expect(
      valid(updateStarted(origin, { updateKind: "RUN", cause: "API_CALL", definitionVersion: 3 })).cut_id,
    ).toBe(null);
  });

  it("Update Completed: the kind of update and its definition version", () => {
    expect(valid(updateCompleted(origin, { updateKind: "VALIDATE", definitionVersion: 2 }))).toMatchObject({
      event_id: "u-1:update-completed",
      update_kind: "VALIDATE",
      definition_version: 2,
    });
  });

  it("Update Failed: the error code and message the update has", () => {
    const error = { errorCode: "EXPECTATION_VIOLATION", message: "flow ingest failed expectation positive" };
    expect(valid(updateFailed(origin, { updateKind: "RUN", definitionVersion: 1, error }))).toMatchObject({
      event_id: "u-1:update-failed",
      error_code: "EXPECTATION_VIOLATION",
      message: error.message,
    });
  });

  it("Rewind Planned: the point and each table's version at it (null for one emptied), and the cut", () => {
    expect(valid(rewindPlanned(origin, { ...plan, dryRun: true }))).toEqual({
      event_id: "u-1:rewind-planned",
      pipeline_id: "p-1",
      pipeline_name: "orders",
      update_id: "u-1",
      time: TIME,
      rewind_point: { rewind_point_id: "rp-7", timestamp: "2026-12-05T00:00:00.000Z" },
      tables: [
        { dataset: "raw", table: "main.shop.raw", action: "RESTORE", version: 4 },
        { dataset: "late", table: "main.shop.late", action: "TRUNCATE", version: null },
      ],
      cut_id: "cut-3",
    });
  });

  it("Rewind Completed: each table's restored version with the commit that did it", () => {
    const { rewindPointId: _point, cutId: _cut, ...byTimestamp } = plan;
    const detail = valid(rewindCompleted(origin, byTimestamp, new Map([["raw", 9]])));
    expect(detail).toMatchObject({
      event_id: "u-1:rewind-completed",
      rewind_point: { rewind_point_id: null, timestamp: "2026-12-05T00:00:00.000Z" },
      tables: [
        { dataset: "raw", version: 4, restore_commit_version: 9 },
        { dataset: "late", version: null, restore_commit_version: null },
      ],
      cut_id: null,
    });
  });

  it("Full Refresh: each table reset, how, and the commit that emptied it", () => {
    const resets = [
      { dataset: "raw", table: "main.shop.raw", refresh: "FULL", how: "TRUNCATE", at: 0, tableVersion: 5 },
      { dataset: "gold", table: "main.shop.gold", refresh: "FULL", how: "DROP", at: 0 },
    ] as const;
    expect(valid(fullRefresh(origin, "FULL", resets))).toMatchObject({
      event_id: "u-1:full-refresh",
      refresh: "FULL",
      tables: [
        { dataset: "raw", how: "TRUNCATE", version: 5 },
        { dataset: "gold", how: "DROP", version: null },
      ],
    });
  });

  it("Checkpoint Reset: the flows that read again from their sources' start", () => {
    expect(valid(checkpointReset(origin, ["ingest"]))).toMatchObject({
      event_id: "u-1:checkpoint-reset",
      flows: ["ingest"],
    });
  });

  it("the published schemas refuse an event that lacks a field", () => {
    const event = updateCompleted(origin, { updateKind: "RUN", definitionVersion: 1 });
    const { update_kind: _kind, ...detail } = event.detail;
    expect(schemaErrors({ ...event, detail })).toEqual([expect.stringContaining("update_kind")]);
  });

  it("publishes an occurrence once, though its step runs again, and keeps the event it published", async () => {
    const bucket = new MemoryObjectStore();
    const published: LifecycleEvent[] = [];
    const lifecycle = {
      hasDestination: true,
      publish: async (e: LifecycleEvent, delivered?: () => Promise<void>) => {
        published.push(e);
        await delivered?.();
      },
    };
    const ports = { bucket, lifecycle };
    const first = updateCompleted(origin, { updateKind: "RUN", definitionVersion: 1 });
    const retried = updateCompleted(
      { ...origin, time: origin.time + 5_000 },
      { updateKind: "RUN", definitionVersion: 1 },
    );
    expect(retried.detail.event_id).toBe(first.detail.event_id);
    await publishOnce(ports, first);
    await publishOnce(ports, retried);
    // Another kind of the same update is an occurrence of its own.
    await publishOnce(
      ports,
      updateStarted(origin, { updateKind: "RUN", cause: "API_CALL", definitionVersion: 1 }),
    );
    expect(published.map((e) => e["detail-type"])).toEqual(["Update Completed", "Update Started"]);
    expect(published[0]).toEqual(first);
    expect(JSON.parse(new TextDecoder().decode(await bucket.get(lifecycleEventKey(first))))).toEqual(first);
  });

  it("sends again an event claimed and never delivered: a crash between claim and send, a bus that was down", async () => {
    const bucket = new MemoryObjectStore();
    const published: LifecycleEvent[] = [];
    let crash = true;
    const ports = {
      bucket,
      lifecycle: {
        hasDestination: true,
        publish: async (e: LifecycleEvent, delivered?: () => Promise<void>) => {
          // The function dies after the claim, before the event leaves.
          if (crash) throw new InjectedCrashError("after-event-claim");
          published.push(e);
          await delivered?.();
        },
      },
    };
    const event = updateCompleted(origin, { updateKind: "RUN", definitionVersion: 1 });
    await expect(publishOnce(ports, event)).rejects.toThrow(InjectedCrashError);
    expect(await bucket.head(lifecycleEventKey(event))).toBeDefined();
    crash = false;
    // The sweep sends it; then neither a retried step nor another sweep sends it again.
    expect(await resendUndelivered(ports, "p-1", "u-1")).toBe(1);
    await publishOnce(ports, event);
    expect(await resendUndelivered(ports, "p-1", "u-1")).toBe(0);
    expect(published).toEqual([event]);
    // The step retried before any sweep sends it too (at least once: a reader dedupes on event_id).
    const failed = updateFailed(origin, {
      updateKind: "RUN",
      definitionVersion: 1,
      error: { errorCode: "X", message: "y" },
    });
    crash = true;
    await expect(publishOnce(ports, failed)).rejects.toThrow(InjectedCrashError);
    crash = false;
    await publishOnce(ports, failed);
    expect(published.map((e) => e.detail.event_id)).toEqual(["u-1:update-completed", "u-1:update-failed"]);
  });

  it("Update Canceled: the kind of update and why", () => {
    expect(
      valid(updateCanceled(origin, { updateKind: "RUN", definitionVersion: 2, message: "stopped" })),
    ).toMatchObject({ event_id: "u-1:update-canceled", update_kind: "RUN", message: "stopped" });
  });

  it("docs/events/*.schema.json are what the zod schemas make (npx tsx infra/aws/event-schema-files.ts)", async () => {
    for (const detailType of LIFECYCLE_DETAIL_TYPES)
      expect(readFileSync(eventSchemaFile(detailType), "utf8"), detailType).toBe(
        await eventSchemaText(detailType),
      );
  });
});
