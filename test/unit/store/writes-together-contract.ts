import { describe, expect, it } from "vitest";
import type { EventLogRepository, NewEvent } from "../../../shared/store/event-log-repository.ts";
import type { PipelinesRepository } from "../../../shared/store/pipelines-repository.ts";
import type { UpdatesRepository } from "../../../shared/store/updates-repository.ts";
import { PipelineChangeTooLargeError } from "../../../shared/store/errors.ts";
import { definitionNamed, definitionWithTables, uniqueSchema } from "./definitions.ts";

/** One adapter family's repositories, which take each other's writes (shared/store/store-writes.ts). */
export interface RepositoryFamily {
  readonly updates: UpdatesRepository;
  readonly pipelines: PipelinesRepository;
  readonly events: EventLogRepository;
}

const event = (pipelineId: string, updateId: string, message: string, timestamp: number): NewEvent => ({
  origin: { pipeline_id: pipelineId, pipeline_name: "together", update_id: updateId },
  message,
  level: "INFO",
  event_type: "update_progress",
  details: {},
  timestamp,
});

/**
 * `UpdatesRepository.transitionWith`: a transition, a pipeline change and events made all or none,
 * run against every adapter family.
 */
export function writesTogetherContract(name: string, create: () => RepositoryFamily): void {
  describe(`${name} writes a transition with other repositories' writes, all or none`, () => {
    const started = async (family: RepositoryFamily) => {
      const { pipelineId } = await family.pipelines.create(definitionNamed("together"));
      const update = await family.updates.create({
        pipelineId,
        cause: "API_CALL",
        definitionVersion: 1,
        request: {},
        intent: { kind: "run" },
        state: "QUEUED",
      });
      await family.pipelines.beginUpdate(pipelineId, update.updateId, "STARTING");
      return { pipelineId, updateId: update.updateId };
    };
    const messages = async (family: RepositoryFamily, pipelineId: string) =>
      (await family.events.query(pipelineId, { order: "asc" }, { limit: 10 })).items.map((e) => e.message);

    it("writes all of them in one go", async () => {
      const family = create();
      const { pipelineId, updateId } = await started(family);
      const written = await family.updates.transitionWith(pipelineId, updateId, "RUNNING", [
        family.pipelines.setStateWrite(pipelineId, updateId, "RUNNING"),
        ...family.events.appendWrites([
          event(pipelineId, updateId, "first", Date.now()),
          event(pipelineId, updateId, "second", Date.now() + 1),
        ]),
      ]);
      expect(written).toBe(true);
      expect((await family.updates.get(pipelineId, updateId))?.state).toBe("RUNNING");
      expect((await family.pipelines.get(pipelineId))?.state).toBe("RUNNING");
      expect(await messages(family, pipelineId)).toEqual(["first", "second"]);

      expect(
        await family.updates.transitionWith(pipelineId, updateId, "COMPLETED", [
          family.pipelines.endUpdateWrite(pipelineId, updateId, "IDLE", 1),
        ]),
      ).toBe(true);
      const update = await family.updates.get(pipelineId, updateId);
      expect(update?.state).toBe("COMPLETED");
      expect(update?.endedAt).toBeGreaterThan(0);
      const pipeline = await family.pipelines.get(pipelineId);
      expect(pipeline?.state).toBe("IDLE");
      expect(pipeline?.activeUpdateId).toBeUndefined();
      expect(pipeline?.tablesWrittenBy).toBe(1);
    });

    it("writes none of them once the update has ended, or the pipeline is another update's", async () => {
      const family = create();
      const ended = await started(family);
      await family.updates.transition(ended.pipelineId, ended.updateId, "CANCELED");
      expect(
        await family.updates.transitionWith(ended.pipelineId, ended.updateId, "COMPLETED", [
          family.pipelines.endUpdateWrite(ended.pipelineId, ended.updateId, "IDLE"),
          ...family.events.appendWrites([event(ended.pipelineId, ended.updateId, "late", Date.now())]),
        ]),
      ).toBe(false);
      expect((await family.updates.get(ended.pipelineId, ended.updateId))?.state).toBe("CANCELED");
      expect((await family.pipelines.get(ended.pipelineId))?.activeUpdateId).toBe(ended.updateId);
      expect(await messages(family, ended.pipelineId)).toEqual([]);

      const released = await started(family);
      await family.pipelines.endUpdate(released.pipelineId, released.updateId, "IDLE");
      expect(
        await family.updates.transitionWith(released.pipelineId, released.updateId, "RUNNING", [
          family.pipelines.setStateWrite(released.pipelineId, released.updateId, "RUNNING"),
          ...family.events.appendWrites([event(released.pipelineId, released.updateId, "late", Date.now())]),
        ]),
      ).toBe(false);
      expect((await family.updates.get(released.pipelineId, released.updateId))?.state).toBe("QUEUED");
      expect((await family.pipelines.get(released.pipelineId))?.state).toBe("IDLE");
      expect(await messages(family, released.pipelineId)).toEqual([]);
    });

    it("writes an edit's events with the edit, and none of them when the edit loses a race", async () => {
      const family = create();
      const { pipelineId } = await family.pipelines.create(definitionNamed("together"));
      const edited = await family.pipelines.edit(pipelineId, definitionNamed("edited"), 1, [
        ...family.events.appendWrites([event(pipelineId, "", "edit warning", Date.now())]),
      ]);
      expect(edited).toEqual({ outcome: "edited", version: 2 });
      expect(await messages(family, pipelineId)).toEqual(["edit warning"]);

      const stale = await family.pipelines.edit(pipelineId, definitionNamed("stale"), 1, [
        ...family.events.appendWrites([event(pipelineId, "", "stale warning", Date.now())]),
      ]);
      expect(stale).toEqual({ outcome: "version-conflict", currentVersion: 2 });
      expect(await messages(family, pipelineId)).toEqual(["edit warning"]);
      expect((await family.pipelines.get(pipelineId))?.name).toBe("edited");
    });

    it("refuses an edit whose claims and events outgrow one transaction, naming the pipeline; one that fits is written", async () => {
      const family = create();
      const schema = uniqueSchema();
      const { pipelineId } = await family.pipelines.create(definitionNamed("crowded", undefined, schema));
      // The pipeline and its new version, 60 claims (t0's `orders` released: 61) and the events.
      const events = (count: number) =>
        family.events.appendWrites(
          Array.from({ length: count }, (_, i) => event(pipelineId, "", `warning ${i}`, Date.now() + i)),
        );
      const refused = await family.pipelines
        .edit(pipelineId, definitionWithTables("crowded", 60, schema), 1, events(38))
        .catch((error: unknown) => error);
      expect(refused).toBeInstanceOf(PipelineChangeTooLargeError);
      expect(refused).toMatchObject({ errorCode: "PIPELINE_CHANGE_TOO_LARGE", httpStatus: 400, writes: 101 });
      expect((refused as Error).message).toContain(pipelineId);
      expect((await family.pipelines.get(pipelineId))?.definitionVersion).toBe(1);
      expect(await family.pipelines.tableOwner(`main.${schema}.t0`)).toBeUndefined();
      expect(await messages(family, pipelineId)).toEqual([]);

      const fits = definitionWithTables("crowded", 60, schema);
      expect(await family.pipelines.edit(pipelineId, fits, 1, events(37))).toEqual({
        outcome: "edited",
        version: 2,
      });
      expect(await family.pipelines.tableOwner(`main.${schema}.t59`)).toBe(pipelineId);
    });
  });
}
