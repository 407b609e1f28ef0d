import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { InvalidPageTokenError, UpdateNotFoundError } from "../../../shared/store/errors.ts";
import { timeOfId } from "../../../shared/store/time-ordered-id.ts";
import type { UpdateRecord, UpdatesRepository } from "../../../shared/store/updates-repository.ts";

const newUpdate = (pipelineId: string) => ({
  pipelineId,
  cause: "API_CALL" as const,
  definitionVersion: 3,
  request: { full_refresh_selection: ["orders", "daily"], refresh: "FULL", rewind_spec: { dry_run: true } },
  intent: { kind: "rewind", dryRun: true },
});

/**
 * The Updates contract (shared/store/updates-repository.ts), run against every adapter. `create`
 * returns a repository whose clock is `now` when given; each test uses a pipeline no other test uses.
 */
export function updatesRepositoryContract(
  name: string,
  create: (now?: () => number) => UpdatesRepository,
): void {
  describe(`${name} honours the Updates contract`, () => {
    it("creates an update with a time-ordered id and reads it back exactly", async () => {
      const repository = create(() => 1_750_000_000_123);
      const pipelineId = randomUUID();
      const created = await repository.create(newUpdate(pipelineId));
      expect(timeOfId(created.updateId)).toBe(1_750_000_000_123);
      expect(created).toEqual({
        pipelineId,
        updateId: created.updateId,
        state: "CREATED",
        cause: "API_CALL",
        definitionVersion: 3,
        request: newUpdate(pipelineId).request,
        intent: newUpdate(pipelineId).intent,
        createdAt: 1_750_000_000_123,
        lastModified: 1_750_000_000_123,
      });
      expect(await repository.get(pipelineId, created.updateId)).toEqual(created);
      expect(await repository.get(pipelineId, "01NOSUCHUPDATE000000000000")).toBeUndefined();
    });

    it("moves through states, stamps the end, and keeps terminal states final", async () => {
      let clock = 1_750_000_000_000;
      const repository = create(() => (clock += 1000));
      const pipelineId = randomUUID();
      const { updateId } = await repository.create(newUpdate(pipelineId));
      expect((await repository.transition(pipelineId, updateId, "INITIALIZING")).outcome).toBe(
        "transitioned",
      );
      expect((await repository.transition(pipelineId, updateId, "RUNNING")).outcome).toBe("transitioned");
      const again = await repository.transition(pipelineId, updateId, "RUNNING");
      expect(again).toMatchObject({ outcome: "transitioned", update: { state: "RUNNING" } });

      const failed = await repository.transition(pipelineId, updateId, "FAILED", {
        error: { errorCode: "FLOW_FAILED", message: "flow clean_orders failed: division by zero" },
      });
      expect(failed).toEqual({
        outcome: "transitioned",
        update: expect.objectContaining({
          state: "FAILED",
          endedAt: clock,
          error: { errorCode: "FLOW_FAILED", message: "flow clean_orders failed: division by zero" },
        }),
      });
      const late = await repository.transition(pipelineId, updateId, "COMPLETED");
      expect(late).toEqual({
        outcome: "already-final",
        update: expect.objectContaining({ state: "FAILED", endedAt: failed.update.endedAt }),
      });
      await expect(
        repository.transition(pipelineId, "01NOSUCHUPDATE000000000000", "RUNNING"),
      ).rejects.toBeInstanceOf(UpdateNotFoundError);
    });

    it("records the execution running an update", async () => {
      const repository = create();
      const pipelineId = randomUUID();
      const { updateId } = await repository.create(newUpdate(pipelineId));
      await repository.recordExecution(
        pipelineId,
        updateId,
        "arn:aws:states:us-east-1:000000000000:execution:ebb:abc",
      );
      expect((await repository.get(pipelineId, updateId))?.executionArn).toBe(
        "arn:aws:states:us-east-1:000000000000:execution:ebb:abc",
      );
      await expect(
        repository.recordExecution(pipelineId, "01NOSUCHUPDATE000000000000", "arn"),
      ).rejects.toBeInstanceOf(UpdateNotFoundError);
    });

    it("discards an update that never began, and only such an update", async () => {
      const repository = create();
      const pipelineId = randomUUID();
      const queued = await repository.create({ ...newUpdate(pipelineId), state: "QUEUED" });
      const running = await repository.create({ ...newUpdate(pipelineId), state: "QUEUED" });
      await repository.transition(pipelineId, running.updateId, "RUNNING");
      expect(await repository.discard(pipelineId, queued.updateId)).toBe(true);
      expect(await repository.get(pipelineId, queued.updateId)).toBeUndefined();
      expect(await repository.discard(pipelineId, queued.updateId)).toBe(false);
      expect(await repository.discard(pipelineId, running.updateId)).toBe(false);
      expect((await repository.get(pipelineId, running.updateId))?.state).toBe("RUNNING");
    });

    it("records the execution-to-be with the update, named after the id it gets", async () => {
      const repository = create();
      const pipelineId = randomUUID();
      const created = await repository.create({
        ...newUpdate(pipelineId),
        executionArnOf: (updateId) => `arn:aws:states:us-east-1:000000000000:execution:ebb:${updateId}`,
      });
      const arn = `arn:aws:states:us-east-1:000000000000:execution:ebb:${created.updateId}`;
      expect(created.executionArn).toBe(arn);
      expect((await repository.get(pipelineId, created.updateId))?.executionArn).toBe(arn);
      expect((await repository.create(newUpdate(pipelineId))).executionArn).toBeUndefined();
    });

    it("lists newest first, page by page, forward and back", async () => {
      let clock = 1_760_000_000_000;
      const repository = create(() => (clock += 10));
      const pipelineId = randomUUID();
      const created: UpdateRecord[] = [];
      for (let i = 0; i < 5; i++) created.push(await repository.create(newUpdate(pipelineId)));
      const ids = created.map((u) => u.updateId).reverse();
      const idsOf = (page: { items: readonly UpdateRecord[] }) => page.items.map((u) => u.updateId);

      const first = await repository.list(pipelineId, { limit: 2 });
      expect(idsOf(first)).toEqual(ids.slice(0, 2));
      expect(first.prevPageToken).toBeUndefined();
      const second = await repository.list(pipelineId, {
        limit: 2,
        pageToken: first.nextPageToken as string,
      });
      expect(idsOf(second)).toEqual(ids.slice(2, 4));
      const third = await repository.list(pipelineId, {
        limit: 2,
        pageToken: second.nextPageToken as string,
      });
      expect(idsOf(third)).toEqual(ids.slice(4));
      expect(third.nextPageToken).toBeUndefined();

      const backToSecond = await repository.list(pipelineId, {
        limit: 2,
        pageToken: third.prevPageToken as string,
      });
      expect(idsOf(backToSecond)).toEqual(ids.slice(2, 4));
      const backToFirst = await repository.list(pipelineId, {
        limit: 2,
        pageToken: backToSecond.prevPageToken as string,
      });
      expect(idsOf(backToFirst)).toEqual(ids.slice(0, 2));
      expect(backToFirst.prevPageToken).toBeUndefined();
      expect(backToFirst.nextPageToken).toBeDefined();
    });

    it("refuses a page token from another pipeline's listing or made up", async () => {
      const repository = create();
      const pipelineId = randomUUID();
      await repository.create(newUpdate(pipelineId));
      await repository.create(newUpdate(pipelineId));
      const page = await repository.list(pipelineId, { limit: 1 });
      await expect(
        repository.list(randomUUID(), { limit: 1, pageToken: page.nextPageToken as string }),
      ).rejects.toBeInstanceOf(InvalidPageTokenError);
      await expect(
        repository.list(pipelineId, { limit: 1, pageToken: "not-a-token" }),
      ).rejects.toBeInstanceOf(InvalidPageTokenError);
      await expect(repository.list(pipelineId, { limit: 0 })).rejects.toThrow(RangeError);
    });
  });
}
