import { describe, expect, it } from "vitest";
import { definitionNamed, definitionWithTables, uniqueSchema } from "./definitions.ts";
import {
  DefinitionTooLargeError,
  DefinitionVersionNotFoundError,
  PipelineChangeTooLargeError,
  PipelineNotFoundError,
  TableOwnedError,
} from "../../../shared/store/errors.ts";
import type { PipelinesRepository } from "../../../shared/store/pipelines-repository.ts";

/**
 * The Pipelines contract (shared/store/pipelines-repository.ts), run against every adapter. `create`
 * returns a repository whose clock is `now` when given; tests share a store, so each works on the
 * pipelines it created.
 */
export function pipelinesRepositoryContract(
  name: string,
  create: (now?: () => number) => PipelinesRepository,
): void {
  describe(`${name} honours the Pipelines contract`, () => {
    it("creates a pipeline at definition version 1, idle, and reads it back", async () => {
      const repository = create(() => 1_700_000_000_000);
      const created = await repository.create(definitionNamed("Sales"));
      expect(created).toEqual({
        pipelineId: expect.stringMatching(/^[0-9a-f-]{36}$/),
        name: "Sales",
        definitionVersion: 1,
        state: "IDLE",
        rewindBlocked: false,
        createdAt: 1_700_000_000_000,
        lastModified: 1_700_000_000_000,
      });
      expect(await repository.get(created.pipelineId)).toEqual(created);
      expect(await repository.get("no-such-pipeline")).toBeUndefined();
    });

    it("keeps every definition version, each retrievable, with column order intact", async () => {
      const repository = create();
      const schema = uniqueSchema();
      const { pipelineId } = await repository.create(definitionNamed("v1", ["zeta", "alpha"], schema));
      expect(await repository.edit(pipelineId, definitionNamed("v2", ["b", "a", "c"], schema), 1)).toEqual({
        outcome: "edited",
        version: 2,
      });
      expect(await repository.edit(pipelineId, definitionNamed("v3", undefined, schema), 2)).toEqual({
        outcome: "edited",
        version: 3,
      });

      expect((await repository.get(pipelineId))?.definitionVersion).toBe(3);
      expect((await repository.get(pipelineId))?.name).toBe("v3");
      expect((await repository.getDefinition(pipelineId)).definition).toEqual(
        definitionNamed("v3", undefined, schema),
      );
      const v2 = await repository.getDefinition(pipelineId, 2);
      expect(v2.definition).toEqual(definitionNamed("v2", ["b", "a", "c"], schema));
      const firstFlow =
        v2.definition.datasets[0]?.type === "streaming_table"
          ? v2.definition.datasets[0].flows[0]
          : undefined;
      expect(
        Object.keys(firstFlow?.source.type === "auto_loader" ? (firstFlow.source.schema ?? {}) : {}),
      ).toEqual(["b", "a", "c"]);
      expect(
        (await repository.listDefinitions(pipelineId)).map((v) => [v.version, v.definition.name]),
      ).toEqual([
        [1, "v1"],
        [2, "v2"],
        [3, "v3"],
      ]);
      await expect(repository.getDefinition(pipelineId, 4)).rejects.toBeInstanceOf(
        DefinitionVersionNotFoundError,
      );
    });

    it("refuses an edit based on a stale version, as a result", async () => {
      const repository = create();
      const { pipelineId } = await repository.create(definitionNamed("v1"));
      const [first, second] = await Promise.all([
        repository.edit(pipelineId, definitionNamed("from A"), 1),
        repository.edit(pipelineId, definitionNamed("from B"), 1),
      ]);
      expect([first, second]).toContainEqual({ outcome: "edited", version: 2 });
      expect([first, second]).toContainEqual({ outcome: "version-conflict", currentVersion: 2 });
      expect((await repository.listDefinitions(pipelineId)).length).toBe(2);
      await expect(repository.edit("no-such-pipeline", definitionNamed("x"), 1)).rejects.toBeInstanceOf(
        PipelineNotFoundError,
      );
    });

    it("lets one update hold the pipeline; a second start is PipelineBusy", async () => {
      const repository = create();
      const { pipelineId } = await repository.create(definitionNamed("Busy"));
      const starts = await Promise.all(
        ["u1", "u2", "u3"].map((updateId) => repository.beginUpdate(pipelineId, updateId)),
      );
      const begun = starts.filter((start) => start.outcome === "begun");
      expect(begun).toHaveLength(1);
      const winner = begun[0]?.outcome === "begun" ? begun[0].pipeline.activeUpdateId : undefined;
      expect(starts.filter((start) => start.outcome === "pipeline-busy")).toEqual([
        { outcome: "pipeline-busy", activeUpdateId: winner },
        { outcome: "pipeline-busy", activeUpdateId: winner },
      ]);
      expect((await repository.get(pipelineId))?.state).toBe("RUNNING");
    });

    it("changes state only for the active update, and frees the pipeline when it ends", async () => {
      const repository = create();
      const { pipelineId } = await repository.create(definitionNamed("States"));
      await repository.beginUpdate(pipelineId, "u1", "STARTING");
      expect(await repository.setState(pipelineId, "u2", "RUNNING")).toEqual({
        outcome: "not-active",
        activeUpdateId: "u1",
      });
      expect(await repository.setState(pipelineId, "u1", "RUNNING")).toEqual({ outcome: "updated" });
      expect(await repository.endUpdate(pipelineId, "u1", "FAILED")).toEqual({ outcome: "updated" });
      expect(await repository.endUpdate(pipelineId, "u1", "IDLE")).toEqual({ outcome: "not-active" });
      const ended = await repository.get(pipelineId);
      expect(ended?.state).toBe("FAILED");
      expect(ended?.activeUpdateId).toBeUndefined();
      expect((await repository.beginUpdate(pipelineId, "u2")).outcome).toBe("begun");
      await expect(repository.beginUpdate("no-such-pipeline", "u9")).rejects.toBeInstanceOf(
        PipelineNotFoundError,
      );
    });

    it("remembers which definition version last wrote the tables, and forgets it when a rewind begins", async () => {
      const repository = create();
      const { pipelineId } = await repository.create(definitionNamed("Writer"));
      expect((await repository.get(pipelineId))?.tablesWrittenBy).toBeUndefined();
      await repository.beginUpdate(pipelineId, "run-1");
      await repository.endUpdate(pipelineId, "run-1", "IDLE", 1);
      await repository.beginUpdate(pipelineId, "validate-1");
      await repository.endUpdate(pipelineId, "validate-1", "IDLE");
      expect((await repository.get(pipelineId))?.tablesWrittenBy).toBe(1);
      await repository.beginUpdate(pipelineId, "rewind-1", "STARTING", { restoresTables: true });
      expect((await repository.get(pipelineId))?.tablesWrittenBy).toBeUndefined();
      await repository.endUpdate(pipelineId, "rewind-1", "FAILED");
      expect((await repository.get(pipelineId))?.tablesWrittenBy).toBeUndefined();
    });

    it("records and clears the rewind block", async () => {
      const repository = create();
      const { pipelineId } = await repository.create(definitionNamed("Rewind"));
      await repository.setRewindBlock(pipelineId, { blocked: true, byUpdateId: "rewind-1" });
      expect(await repository.get(pipelineId)).toMatchObject({
        rewindBlocked: true,
        rewindBlockedBy: "rewind-1",
      });
      await repository.setRewindBlock(pipelineId, { blocked: false });
      const cleared = await repository.get(pipelineId);
      expect(cleared?.rewindBlocked).toBe(false);
      expect(cleared?.rewindBlockedBy).toBeUndefined();
      await expect(repository.setRewindBlock("no-such-pipeline", { blocked: false })).rejects.toBeInstanceOf(
        PipelineNotFoundError,
      );
    });

    it("marks a refresh's resets under way only while its update is active, and clears the mark", async () => {
      const repository = create();
      const { pipelineId } = await repository.create(definitionNamed("Refresh"));
      const mark = { updateId: "u1", datasets: ["raw", "orders"], since: 1_000 };
      expect(await repository.markResetUnderWay(pipelineId, mark)).toEqual({ outcome: "not-active" });
      expect((await repository.get(pipelineId))?.resetUnderWay).toBeUndefined();
      await repository.beginUpdate(pipelineId, "u1");
      expect(await repository.markResetUnderWay(pipelineId, mark)).toEqual({ outcome: "updated" });
      await repository.endUpdate(pipelineId, "u1", "IDLE");
      // The mark outlives its update: that is what keeps the next ones from losing rows.
      expect((await repository.get(pipelineId))?.resetUnderWay).toEqual(mark);
      await repository.clearResetUnderWay(pipelineId);
      expect((await repository.get(pipelineId))?.resetUnderWay).toBeUndefined();
      await expect(repository.clearResetUnderWay("no-such-pipeline")).rejects.toBeInstanceOf(
        PipelineNotFoundError,
      );
    });

    it("deletes a pipeline and its versions, but not while an update holds it", async () => {
      const repository = create();
      const { pipelineId } = await repository.create(definitionNamed("Doomed"));
      const v2 = definitionNamed("Doomed v2");
      await repository.edit(pipelineId, v2, 1);
      await repository.beginUpdate(pipelineId, "u1");
      expect(await repository.delete(pipelineId)).toEqual({ outcome: "pipeline-busy", activeUpdateId: "u1" });
      await repository.endUpdate(pipelineId, "u1", "IDLE");
      expect(await repository.delete(pipelineId)).toEqual({
        outcome: "deleted",
        tables: [`main.${v2.schema}.orders`],
      });
      expect(await repository.get(pipelineId)).toBeUndefined();
      await expect(repository.getDefinition(pipelineId, 1)).rejects.toBeInstanceOf(
        DefinitionVersionNotFoundError,
      );
      await expect(repository.delete(pipelineId)).rejects.toBeInstanceOf(PipelineNotFoundError);
      expect((await repository.list()).some((p) => p.pipelineId === pipelineId)).toBe(false);
    });

    it("lists pipelines newest first, without their definition items", async () => {
      let clock = 2_000_000_000_000;
      const repository = create(() => clock++);
      const older = await repository.create(definitionNamed("Older"));
      const newer = await repository.create(definitionNamed("Newer"));
      const listed = (await repository.list()).filter(
        (p) => p.pipelineId === older.pipelineId || p.pipelineId === newer.pipelineId,
      );
      expect(listed.map((p) => p.name)).toEqual(["Newer", "Older"]);
    });

    it("refuses a definition too large for one item, before writing anything", async () => {
      const repository = create();
      const { pipelineId } = await repository.create(definitionNamed("Small"));
      const huge = definitionNamed("Huge");
      const dataset = huge.datasets[0];
      if (dataset?.type === "streaming_table" && dataset.flows[0]) {
        dataset.flows[0].sql = `SELECT * FROM source WHERE note <> '${"x".repeat(400_000)}'`;
      }
      await expect(repository.create(huge)).rejects.toBeInstanceOf(DefinitionTooLargeError);
      await expect(repository.edit(pipelineId, huge, 1)).rejects.toBeInstanceOf(DefinitionTooLargeError);
      expect((await repository.get(pipelineId))?.definitionVersion).toBe(1);
    });

    it("refuses a create whose claims outgrow one transaction, naming the pipeline; one that fits is made", async () => {
      const repository = create();
      const schema = uniqueSchema();
      const refused = await repository
        .create(definitionWithTables("Wide", 99, schema))
        .catch((e: unknown) => e);
      expect(refused).toBeInstanceOf(PipelineChangeTooLargeError);
      expect(refused).toMatchObject({ errorCode: "PIPELINE_CHANGE_TOO_LARGE", httpStatus: 400, writes: 101 });
      expect((refused as Error).message).toContain('"Wide"');
      expect(await repository.tableOwner(`main.${schema}.t0`)).toBeUndefined();

      const { pipelineId } = await repository.create(definitionWithTables("Wide", 98, schema));
      expect(await repository.tableOwner(`main.${schema}.t97`)).toBe(pipelineId);
    });

    it("claims a pipeline's tables: one owner each, taken atomically, moved by edits, released by delete", async () => {
      const repository = create();
      const schema = uniqueSchema();
      const table = `main.${schema}.orders`;
      const first = await repository.create(definitionNamed("First", undefined, schema));
      expect(await repository.tableOwner(table)).toBe(first.pipelineId);
      const refused = await repository.create(definitionNamed("Second", undefined, schema)).catch((e) => e);
      expect(refused).toBeInstanceOf(TableOwnedError);
      expect(refused).toMatchObject({ table, ownerPipelineId: first.pipelineId });

      const other = await repository.create(definitionNamed("Other"));
      await expect(
        repository.edit(other.pipelineId, definitionNamed("Other v2", undefined, schema), 1),
      ).rejects.toMatchObject({
        name: "TableOwnedError",
        ownerPipelineId: first.pipelineId,
      });
      expect((await repository.get(other.pipelineId))?.definitionVersion).toBe(1);

      // An edit that drops the table releases it; another pipeline may then claim it.
      await repository.edit(first.pipelineId, definitionNamed("First v2"), 1);
      expect(await repository.tableOwner(table)).toBeUndefined();
      await repository.edit(other.pipelineId, definitionNamed("Other v2", undefined, schema), 1);
      expect(await repository.tableOwner(table)).toBe(other.pipelineId);

      // Kept claims survive the delete until released.
      expect(await repository.delete(other.pipelineId, { keepTables: true })).toEqual({
        outcome: "deleted",
        tables: [table],
      });
      expect(await repository.tableOwner(table)).toBe(other.pipelineId);
      await repository.releaseTables(first.pipelineId, [table]);
      expect(await repository.tableOwner(table)).toBe(other.pipelineId);
      await repository.releaseTables(other.pipelineId, [table]);
      expect(await repository.tableOwner(table)).toBeUndefined();
    });

    it("refuses another pipeline's table whatever version the edit expects", async () => {
      const repository = create();
      const schema = uniqueSchema();
      const owner = await repository.create(definitionNamed("Owner", undefined, schema));
      const { pipelineId } = await repository.create(definitionNamed("Claimer"));
      await repository.edit(pipelineId, definitionNamed("Claimer v2"), 1);
      for (const expected of [1, 2, 3]) {
        await expect(
          repository.edit(pipelineId, definitionNamed("Claimer v3", undefined, schema), expected),
        ).rejects.toMatchObject({ name: "TableOwnedError", ownerPipelineId: owner.pipelineId });
      }
      expect((await repository.get(pipelineId))?.definitionVersion).toBe(2);
    });

    it("of 20 concurrent creates claiming one table, exactly one wins", async () => {
      const repository = create();
      const schema = uniqueSchema();
      const results = await Promise.allSettled(
        Array.from({ length: 20 }, (_, i) =>
          repository.create(definitionNamed(`Racer ${i}`, undefined, schema)),
        ),
      );
      const won = results.filter((r) => r.status === "fulfilled");
      expect(won).toHaveLength(1);
      const owner = (won[0] as PromiseFulfilledResult<{ pipelineId: string }>).value.pipelineId;
      for (const lost of results.filter((r) => r.status === "rejected")) {
        expect(lost.reason).toMatchObject({ name: "TableOwnedError", ownerPipelineId: owner });
      }
      expect(await repository.tableOwner(`main.${schema}.orders`)).toBe(owner);
      const listed = (await repository.list()).filter((p) => p.name.startsWith("Racer "));
      expect(listed.map((p) => p.pipelineId)).toEqual([owner]);
    });
  });
}
