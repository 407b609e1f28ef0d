import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { InvalidPageTokenError } from "../../../shared/store/errors.ts";
import type {
  EventLevel,
  EventLogRepository,
  NewEvent,
  PipelineEvent,
} from "../../../shared/store/event-log-repository.ts";
import { timeOfId } from "../../../shared/store/time-ordered-id.ts";

type CreateEventLog = (now: () => number) => EventLogRepository;

// In the future, so DynamoDB Local's own TTL sweeper (real clock) never removes what a test reads raw.
export const T0 = Date.UTC(2031, 0, 1, 12, 0, 0);
export const DAY = 86_400_000;

export function event(pipelineId: string, timestamp: number, overrides: Partial<NewEvent> = {}): NewEvent {
  return {
    origin: { pipeline_id: pipelineId, pipeline_name: "Sales", update_id: "u1" },
    message: `event at ${timestamp}`,
    level: "INFO",
    event_type: "update_progress",
    details: { update_progress: { state: "RUNNING" } },
    timestamp,
    ...overrides,
  };
}

/** A pipeline with events one minute apart, alternating types and levels, all within a live clock. */
async function seed(create: CreateEventLog, count: number) {
  const repository = create(() => T0 + DAY);
  const pipelineId = randomUUID();
  const events: PipelineEvent[] = [];
  for (let i = 0; i < count; i++) {
    const level: EventLevel = i % 3 === 0 ? "WARN" : "INFO";
    events.push(
      await repository.append(
        event(pipelineId, T0 + i * 60_000, {
          event_type: i % 2 === 0 ? "flow_progress" : "update_progress",
          level,
          origin: {
            pipeline_id: pipelineId,
            pipeline_name: "Sales",
            update_id: i < 4 ? "u1" : "u2",
            dataset_name: "orders",
          },
        }),
      ),
    );
  }
  return { repository, pipelineId, events };
}

const ids = (page: { items: readonly PipelineEvent[] }) => page.items.map((e) => e.id);

/**
 * The event log contract (shared/store/event-log-repository.ts), run against every adapter. `create`
 * returns a repository whose clock is `now`; each test uses a pipeline no other test uses.
 */
export function eventLogRepositoryContract(name: string, create: CreateEventLog): void {
  describe(`${name} honours the event log contract`, () => {
    it("stores events in the Databricks shape and reads one back by id", async () => {
      const repository = create(() => T0);
      const pipelineId = randomUUID();
      const appended = await repository.append(
        event(pipelineId, T0, {
          level: "ERROR",
          event_type: "flow_progress",
          origin: {
            pipeline_id: pipelineId,
            pipeline_name: "Sales",
            update_id: "u1",
            flow_id: "f",
            flow_name: "clean_orders",
            dataset_name: "orders",
            batch_id: 4,
          },
          error: { exceptions: [{ class_name: "FlowError", message: "boom", stack: "at x" }], fatal: true },
          details: { flow_progress: { status: "FAILED", metrics: { num_output_rows: 0 } } },
        }),
      );
      expect(appended).toEqual({
        id: expect.any(String),
        sequence: { control_plane_seq_no: expect.any(Number) },
        origin: {
          pipeline_id: pipelineId,
          pipeline_name: "Sales",
          update_id: "u1",
          flow_id: "f",
          flow_name: "clean_orders",
          dataset_name: "orders",
          batch_id: 4,
        },
        timestamp: "2031-01-01T12:00:00.000Z",
        message: `event at ${T0}`,
        level: "ERROR",
        maturity_level: "STABLE",
        error: { exceptions: [{ class_name: "FlowError", message: "boom", stack: "at x" }], fatal: true },
        event_type: "flow_progress",
        details: { flow_progress: { status: "FAILED", metrics: { num_output_rows: 0 } } },
      });
      expect(timeOfId(appended.id)).toBe(T0);
      expect(await repository.get(pipelineId, appended.id)).toEqual(appended);
      expect(await repository.get(randomUUID(), appended.id)).toBeUndefined();
      expect(await repository.get(pipelineId, "not-an-id")).toBeUndefined();
    });

    it("keeps the append order of events within one millisecond", async () => {
      const repository = create(() => T0);
      const pipelineId = randomUUID();
      const first = await repository.append(event(pipelineId, T0));
      const second = await repository.append(event(pipelineId, T0));
      const third = await repository.append(event(pipelineId, T0));
      expect(second.sequence.control_plane_seq_no).toBeGreaterThan(first.sequence.control_plane_seq_no);
      expect(third.sequence.control_plane_seq_no).toBeGreaterThan(second.sequence.control_plane_seq_no);
      expect(ids(await repository.query(pipelineId, { order: "asc" }, { limit: 10 }))).toEqual([
        first.id,
        second.id,
        third.id,
      ]);
    });

    it("appends many events at once (more than one batch), in order, as if one by one", async () => {
      const repository = create(() => T0);
      const pipelineId = randomUUID();
      const before = await repository.append(event(pipelineId, T0));
      const many = Array.from({ length: 30 }, (_, i) => event(pipelineId, T0 + (i % 3)));
      const appended = await repository.appendAll(many);
      expect(appended.map((e) => e.message)).toEqual(many.map((e) => e.message));
      for (const [i, e] of appended.entries()) {
        const previous = i === 0 ? before : appended[i - 1]!;
        expect(e.sequence.control_plane_seq_no).toBeGreaterThan(previous.sequence.control_plane_seq_no);
        expect(await repository.get(pipelineId, e.id)).toEqual(e);
      }
      const listed = await repository.query(pipelineId, { order: "asc" }, { limit: 50 });
      expect(listed.items).toHaveLength(31);
      expect(await repository.appendAll([])).toEqual([]);
    });

    it("hides each event once its own retention (30 days by default) has passed", async () => {
      let now = T0;
      const repository = create(() => now);
      const pipelineId = randomUUID();
      const normal = await repository.append(event(pipelineId, T0));
      const point = await repository.append(
        event(pipelineId, T0, { event_type: "rewind_summary", retentionMs: 7 * DAY }),
      );
      now = T0 + 7 * DAY - 1000;
      expect(await repository.get(pipelineId, point.id)).toEqual(point);
      now = T0 + 8 * DAY;
      expect(await repository.get(pipelineId, point.id)).toBeUndefined();
      expect(await repository.get(pipelineId, normal.id)).toEqual(normal);
      expect(ids(await repository.query(pipelineId, {}, { limit: 10 }))).toEqual([normal.id]);
      expect(ids(await repository.query(pipelineId, { eventType: "rewind_summary" }, { limit: 10 }))).toEqual(
        [],
      );
      now = T0 + 30 * DAY;
      expect(await repository.get(pipelineId, normal.id)).toBeUndefined();
    });

    it("queries a time range newest first by default, or oldest first, with exact bounds", async () => {
      const { repository, pipelineId, events } = await seed(create, 6);
      const all = events.map((e) => e.id);
      expect(ids(await repository.query(pipelineId, {}, { limit: 10 }))).toEqual([...all].reverse());
      expect(ids(await repository.query(pipelineId, { order: "asc" }, { limit: 10 }))).toEqual(all);
      const minute = (i: number) => T0 + i * 60_000;
      expect(
        ids(
          await repository.query(
            pipelineId,
            { order: "asc", range: { atOrAfter: minute(1), atOrBefore: minute(3) } },
            { limit: 10 },
          ),
        ),
      ).toEqual(all.slice(1, 4));
      expect(
        ids(
          await repository.query(
            pipelineId,
            { order: "asc", range: { after: minute(1), before: minute(3) } },
            { limit: 10 },
          ),
        ),
      ).toEqual(all.slice(2, 3));
    });

    it("pages forward and back; a token carries its query", async () => {
      const { repository, pipelineId, events } = await seed(create, 5);
      const all = events.map((e) => e.id);
      const first = await repository.query(pipelineId, { order: "asc" }, { limit: 2 });
      expect(ids(first)).toEqual(all.slice(0, 2));
      // The query argument is ignored when a token is given (api.md: a page_token excludes other parameters).
      const second = await repository.query(
        pipelineId,
        { order: "desc", eventType: "nothing" },
        { limit: 2, pageToken: first.nextPageToken as string },
      );
      expect(ids(second)).toEqual(all.slice(2, 4));
      const third = await repository.query(
        pipelineId,
        {},
        { limit: 2, pageToken: second.nextPageToken as string },
      );
      expect(ids(third)).toEqual(all.slice(4));
      expect(third.nextPageToken).toBeUndefined();
      const back = await repository.query(
        pipelineId,
        {},
        { limit: 2, pageToken: third.prevPageToken as string },
      );
      expect(ids(back)).toEqual(all.slice(2, 4));
      await expect(
        repository.query(randomUUID(), {}, { limit: 2, pageToken: first.nextPageToken as string }),
      ).rejects.toBeInstanceOf(InvalidPageTokenError);
      await expect(
        repository.query(pipelineId, {}, { limit: 2, pageToken: "garbage" }),
      ).rejects.toBeInstanceOf(InvalidPageTokenError);
    });

    it("queries by event type through the index, with time range and paging", async () => {
      const { repository, pipelineId, events } = await seed(create, 7);
      const flowProgress = events.filter((e) => e.event_type === "flow_progress").map((e) => e.id);
      expect(flowProgress).toHaveLength(4);
      const first = await repository.query(pipelineId, { eventType: "flow_progress" }, { limit: 3 });
      expect(ids(first)).toEqual([...flowProgress].reverse().slice(0, 3));
      const rest = await repository.query(
        pipelineId,
        {},
        { limit: 3, pageToken: first.nextPageToken as string },
      );
      expect(ids(rest)).toEqual([flowProgress[0]]);
      const ranged = await repository.query(
        pipelineId,
        { eventType: "flow_progress", order: "asc", range: { atOrAfter: T0 + 60_000 } },
        { limit: 10 },
      );
      expect(ids(ranged)).toEqual(flowProgress.slice(1));
    });

    it("filters by level, update and dataset", async () => {
      const { repository, pipelineId, events } = await seed(create, 7);
      const expected = events
        .filter((e) => e.level === "WARN" && e.origin.update_id === "u2")
        .map((e) => e.id);
      expect(expected.length).toBeGreaterThan(0);
      const page = await repository.query(
        pipelineId,
        { order: "asc", levels: ["WARN"], updateId: "u2", datasetName: "orders" },
        { limit: 10 },
      );
      expect(ids(page)).toEqual(expected);
      expect(ids(await repository.query(pipelineId, { datasetName: "other" }, { limit: 10 }))).toEqual([]);
    });
  });
}
