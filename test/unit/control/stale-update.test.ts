import { describe, expect, it } from "vitest";
import type { ControlPlane } from "../../../shared/control/plane/control-plane.ts";
import { InProcessExecutions } from "../../../shared/control/updates/driver/in-process-executions.ts";
import {
  LAUNCH_GRACE_MS,
  releaseStaleUpdate,
  releaseStaleUpdates,
} from "../../../shared/control/updates/stale-update.ts";
import { NO_LIFECYCLE_EVENTS } from "../../../shared/control/plane/lifecycle-events.ts";
import { MemoryObjectStore } from "../../../shared/object-store/memory-object-store.ts";
import { MemoryEventLogRepository } from "../../../shared/store/memory-event-log-repository.ts";
import { MemoryPipelinesRepository } from "../../../shared/store/memory-pipelines-repository.ts";
import { MemoryUpdatesRepository } from "../../../shared/store/memory-updates-repository.ts";
import { definitionNamed } from "../store/definitions.ts";

/**
 * An update's record names its execution before the execution starts: a stale-update check must tell
 * an execution not started yet (a young update, kept) from one that is gone (released). An ended
 * execution is released at once (lost-execution.test.ts).
 */

/** The control plane's parts a stale-update check uses; no execution is ever started here. */
function planeAt(clock: { now: number }): ControlPlane {
  const now = () => clock.now;
  const plane: Partial<ControlPlane> = {
    pipelines: new MemoryPipelinesRepository(now),
    updates: new MemoryUpdatesRepository(now),
    events: new MemoryEventLogRepository(now),
    executions: new InProcessExecutions(() => plane as ControlPlane),
    // A lost update's "Update Failed" goes through the outbox in the bucket.
    bucket: new MemoryObjectStore(),
    lifecycle: NO_LIFECYCLE_EVENTS,
    clock: now,
  };
  return plane as ControlPlane;
}

/** A pipeline held by an update recorded with its execution's ARN, whose execution never started. */
async function heldByLaunchingUpdate(plane: ControlPlane) {
  const { pipelineId } = await plane.pipelines.create(definitionNamed("stale"));
  const update = await plane.updates.create({
    pipelineId,
    cause: "API_CALL",
    definitionVersion: 1,
    request: {},
    intent: { kind: "run", refresh: { onlySelected: false }, validateOnly: false, continuous: false },
    state: "QUEUED",
    executionArnOf: (updateId) => plane.executions.arnOf({ pipelineId, updateId }),
  });
  await plane.pipelines.beginUpdate(pipelineId, update.updateId, "STARTING");
  return { pipelineId, updateId: update.updateId, record: (await plane.pipelines.get(pipelineId))! };
}

describe("releasing a pipeline from a stale update", () => {
  it("keeps a young update whose execution has not started, and releases it once past the grace", async () => {
    const clock = { now: 1_760_000_000_000 };
    const plane = planeAt(clock);
    const { pipelineId, updateId, record } = await heldByLaunchingUpdate(plane);
    expect((await releaseStaleUpdate(plane, record)).activeUpdateId).toBe(updateId);
    clock.now += LAUNCH_GRACE_MS;
    expect((await releaseStaleUpdate(plane, record)).activeUpdateId).toBeUndefined();
    expect(await plane.updates.get(pipelineId, updateId)).toMatchObject({
      state: "FAILED",
      error: { errorCode: "EXECUTION_LOST" },
    });
  });

  it("releases a young launching update when the runtime restarts: nothing launches across a restart", async () => {
    const clock = { now: 1_760_000_000_000 };
    const plane = planeAt(clock);
    const { updateId } = await heldByLaunchingUpdate(plane);
    expect(await releaseStaleUpdates(plane)).toEqual([updateId]);
  });
});
