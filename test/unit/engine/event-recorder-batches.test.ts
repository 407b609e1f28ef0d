import { describe, expect, it } from "vitest";
import { EventRecorder } from "../../../shared/engine/event-recorder.ts";
import type { NewEvent } from "../../../shared/store/event-log-repository.ts";
import { MemoryEventLogRepository } from "../../../shared/store/memory-event-log-repository.ts";

/** The recorder writes events in batches (one `appendAll` per moment, 25 at most), in order. */
describe("the event recorder's batched writes", () => {
  const setUp = () => {
    const log = new MemoryEventLogRepository(() => 1_000);
    const calls: NewEvent[][] = [];
    const appendAll = log.appendAll.bind(log);
    log.appendAll = (events) => {
      calls.push([...events]);
      return appendAll(events);
    };
    const recorder = new EventRecorder(
      log,
      { pipeline_id: "p", pipeline_name: "P", update_id: "u" },
      () => 1_000,
    );
    return { log, calls, recorder };
  };

  it("writes the events of one moment together, and all of them before flush returns", async () => {
    const { log, calls, recorder } = setUp();
    await recorder.updateProgress("INITIALIZING");
    await recorder.planningInformation({ levels: [] });
    await recorder.updateProgress("RUNNING");
    expect(calls).toHaveLength(0);
    await recorder.flush();
    expect(calls.map((batch) => batch.map((e) => e.event_type))).toEqual([
      ["update_progress", "planning_information", "update_progress"],
    ]);
    const listed = await log.query("p", { order: "asc" }, { limit: 10 });
    expect(listed.items.map((e) => e.message)).toEqual([
      "Update u is INITIALIZING",
      "Planned the update",
      "Update u is RUNNING",
    ]);
    // One clock reading for all three: each still gets a later timestamp than the one before.
    expect(calls[0]!.map((e) => e.timestamp)).toEqual([1_000, 1_001, 1_002]);
  });

  it("writes 25 at a time, in order, and events arriving during a write go with a later batch", async () => {
    const { calls, recorder } = setUp();
    for (let i = 0; i < 30; i++) await recorder.planningInformation({ i });
    await new Promise<void>((resolve) => setImmediate(resolve));
    await recorder.updateProgress("COMPLETED");
    await recorder.flush();
    expect(calls[0]).toHaveLength(25);
    expect(calls.length).toBeLessThanOrEqual(3);
    const order = calls
      .flat()
      .map((e) => (e.details["planning_information"] as { i?: number } | undefined)?.i);
    expect(order).toEqual([...Array.from({ length: 30 }, (_, i) => i), undefined]);
  });

  it("reports the first failed write at flush", async () => {
    const { log, recorder } = setUp();
    log.appendAll = () => Promise.reject(new Error("down"));
    await recorder.updateProgress("RUNNING");
    await expect(recorder.flush()).rejects.toThrow("down");
  });
});
