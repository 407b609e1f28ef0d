import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { CheckpointNotFoundError } from "../../../shared/store/errors.ts";
import {
  ROOT_SEQ,
  type CheckpointsRepository,
  type FlowRef,
} from "../../../shared/store/checkpoints-repository.ts";
import type { PipelinesRepository } from "../../../shared/store/pipelines-repository.ts";
import { definitionNamed } from "./definitions.ts";

const newFlow = (): FlowRef => ({ pipelineId: randomUUID(), flowId: "clean_orders" });

/** Steps 2 and 5 of the protocol for one batch continuing from HEAD; returns its seq. */
async function runBatch(
  repository: CheckpointsRepository,
  flow: FlowRef,
  tableVersion: number,
  committedAt: number,
): Promise<number> {
  const head = await repository.head(flow);
  const planned = await repository.plan(flow, { parent: head.seq, offsets: { version: tableVersion } });
  if (planned.outcome !== "planned") throw new Error(`could not plan: ${planned.outcome}`);
  const committed = await repository.commit(flow, planned.checkpoint.seq, { tableVersion, committedAt });
  if (committed.outcome !== "committed") throw new Error(`could not commit: ${committed.outcome}`);
  return planned.checkpoint.seq;
}

/**
 * The Checkpoints contract (shared/store/checkpoints-repository.ts: the micro-batch protocol's flow
 * side), run against every adapter. `create` returns a repository whose clock is `now` when given;
 * each test uses a flow no other test uses.
 */
export function checkpointsRepositoryContract(
  name: string,
  create: (now?: () => number) => CheckpointsRepository,
  /** A repository that fences writes on the active updates `pipelines` holds. */
  createFenced: () => { checkpoints: CheckpointsRepository; pipelines: PipelinesRepository },
): void {
  describe(`${name} honours the Checkpoints contract`, () => {
    it("keeps the operator state version a commit names, on the checkpoint and at HEAD", async () => {
      const repository = create(() => 1_700_000_000_000);
      const flow = newFlow();
      await repository.plan(flow, { parent: ROOT_SEQ, offsets: { v: 1 } });
      const stateVersion = "state/p/f/0000000001-x.json";
      const committed = await repository.commit(flow, 1, {
        tableVersion: 3,
        committedAt: 1_700_000_000_100,
        stateVersion,
      });
      expect(committed.outcome).toBe("committed");
      expect((await repository.get(flow, 1))?.stateVersion).toBe(stateVersion);
      expect((await repository.head(flow)).checkpoint?.stateVersion).toBe(stateVersion);
      await repository.plan(flow, { parent: 1, offsets: { v: 2 } });
      await repository.commit(flow, 2, { tableVersion: 4, committedAt: 1_700_000_000_200 });
      expect((await repository.get(flow, 2))?.stateVersion).toBeUndefined();
      // A rewind moves HEAD back: the checkpoint there still names its state version.
      expect(await repository.moveHead(flow, 1)).toEqual({ outcome: "moved" });
      expect((await repository.head(flow)).checkpoint?.stateVersion).toBe(stateVersion);
    });

    it("keeps a batch's size and learned bound, and marks an unfinished batch oversized", async () => {
      const repository = create(() => 1_700_000_000_000);
      const flow = newFlow();
      const size = { files: 10, bytes: 555_000_000 };
      const learnedBound = { maxFiles: 5, maxBytes: 277_500_000 };
      await repository.plan(flow, { parent: ROOT_SEQ, offsets: { v: 1 }, size, learnedBound });
      expect(await repository.markOversized(flow, 1, "FUNCTION_TIMEOUT")).toBe(true);
      const resumed = await repository.resume(flow);
      expect(resumed.after[0]).toMatchObject({ seq: 1, size, learnedBound, oversized: "FUNCTION_TIMEOUT" });
      // A committed batch (or one never planned) is not marked; HEAD's copy keeps the bound it learned.
      await repository.plan(flow, { parent: ROOT_SEQ, offsets: { v: 1 }, size, learnedBound });
      await repository.commit(flow, 2, { tableVersion: 1, committedAt: 1_700_000_000_100 });
      expect(await repository.markOversized(flow, 2, "FUNCTION_TIMEOUT")).toBe(false);
      expect(await repository.markOversized(flow, 9, "FUNCTION_TIMEOUT")).toBe(false);
      expect((await repository.head(flow)).checkpoint).toMatchObject({ size, learnedBound });
      expect((await repository.head(flow)).checkpoint?.oversized).toBeUndefined();
    });

    it("keeps a replay's frontier on the batch and on HEAD's copy of it", async () => {
      const repository = create(() => 1_700_000_000_000);
      const flow = newFlow();
      const replayUntil = { kind: "kafka", next: { orders: { "0": 12 } } };
      await repository.plan(flow, { parent: ROOT_SEQ, offsets: { v: 1 }, replayUntil });
      expect((await repository.resume(flow)).after[0]?.replayUntil).toEqual(replayUntil);
      await repository.commit(flow, 1, { tableVersion: 1, committedAt: 1_700_000_000_100 });
      expect((await repository.head(flow)).checkpoint?.replayUntil).toEqual(replayUntil);
    });

    it("plans write-ahead, then commits and moves HEAD together", async () => {
      const repository = create(() => 1_700_000_000_000);
      const flow = newFlow();
      expect(await repository.head(flow)).toEqual({ seq: ROOT_SEQ });

      const offsets = { files: ["b.json", "a.json"], nested: { version: 12, index: 3 } };
      const planned = await repository.plan(flow, {
        parent: ROOT_SEQ,
        offsets,
        stateRef: "state/p/f/1-x.parquet",
        updateId: "u1",
      });
      expect(planned).toEqual({
        outcome: "planned",
        checkpoint: {
          flow,
          seq: 1,
          parent: 0,
          status: "PLANNED",
          offsets,
          stateRef: "state/p/f/1-x.parquet",
          updateId: "u1",
          plannedAt: 1_700_000_000_000,
        },
      });
      expect(await repository.head(flow)).toEqual({ seq: ROOT_SEQ });

      const committed = await repository.commit(flow, 1, { tableVersion: 7, committedAt: 1_700_000_000_500 });
      const expected = {
        flow,
        seq: 1,
        parent: 0,
        status: "COMMITTED",
        offsets,
        stateRef: "state/p/f/1-x.parquet",
        updateId: "u1",
        plannedAt: 1_700_000_000_000,
        tableVersion: 7,
        committedAt: 1_700_000_000_500,
      };
      expect(committed).toEqual({ outcome: "committed", checkpoint: expected });
      expect(await repository.head(flow)).toEqual({ seq: 1, checkpoint: expected });
      expect(await repository.commit(flow, 1, { tableVersion: 7, committedAt: 1_700_000_000_500 })).toEqual({
        outcome: "already-committed",
        checkpoint: expected,
      });
    });

    it("never lets two planners plan the same seq", async () => {
      const repository = create();
      const flow = newFlow();
      const results = await Promise.all(
        Array.from({ length: 6 }, () => repository.plan(flow, { parent: ROOT_SEQ, offsets: {} })),
      );
      const plannedSeqs = results.flatMap((r) => (r.outcome === "planned" ? [r.checkpoint.seq] : []));
      expect(new Set(plannedSeqs).size).toBe(plannedSeqs.length);
      for (const result of results) {
        if (result.outcome === "seq-taken") expect(plannedSeqs).toContain(result.seq);
      }
      const stored = (await repository.list(flow)).checkpoints.map((c) => c.seq);
      expect(stored).toEqual([...plannedSeqs].sort((a, b) => a - b));
    });

    it("refuses to commit a batch whose parent is no longer HEAD", async () => {
      const repository = create();
      const flow = newFlow();
      await runBatch(repository, flow, 1, 1000);
      const planned = await repository.plan(flow, { parent: 1, offsets: { version: 2 } });
      expect(planned.outcome).toBe("planned");
      expect(await repository.moveHead(flow, ROOT_SEQ)).toEqual({ outcome: "moved" });
      expect(await repository.commit(flow, 2, { tableVersion: 2, committedAt: 2000 })).toEqual({
        outcome: "head-moved",
        head: ROOT_SEQ,
      });
      expect((await repository.get(flow, 2))?.status).toBe("PLANNED");
      await expect(repository.commit(flow, 99, { tableVersion: 1, committedAt: 1 })).rejects.toBeInstanceOf(
        CheckpointNotFoundError,
      );
    });

    it("gives a fresh seq after a rewind, so checkpoints form a tree", async () => {
      const repository = create();
      const flow = newFlow();
      for (let version = 1; version <= 3; version++)
        await runBatch(repository, flow, version, version * 1000);
      expect(await repository.moveHead(flow, 1, { expectedHead: 3 })).toEqual({ outcome: "moved" });
      expect((await repository.head(flow)).seq).toBe(1);
      const seq = await runBatch(repository, flow, 5, 5000);
      expect(seq).toBe(4);
      const tree = (await repository.list(flow)).checkpoints.map((c) => [c.seq, c.parent]);
      expect(tree).toEqual([
        [1, 0],
        [2, 1],
        [3, 2],
        [4, 1],
      ]);
      // Undoing the rewind is another pointer move, to the abandoned branch.
      expect(await repository.moveHead(flow, 3, { expectedHead: 4 })).toEqual({ outcome: "moved" });
    });

    it("moves HEAD only to committed checkpoints, and only from where the caller expects", async () => {
      const repository = create();
      const flow = newFlow();
      await runBatch(repository, flow, 1, 1000);
      await repository.plan(flow, { parent: 1, offsets: {} });
      expect(await repository.moveHead(flow, 2)).toEqual({ outcome: "not-committed", seq: 2 });
      expect(await repository.moveHead(flow, 42)).toEqual({ outcome: "not-committed", seq: 42 });
      expect(await repository.moveHead(flow, ROOT_SEQ, { expectedHead: 7 })).toEqual({
        outcome: "head-moved",
        head: 1,
      });
      expect((await repository.head(flow)).seq).toBe(1);
      expect(await repository.moveHead(flow, ROOT_SEQ, { expectedHead: 1 })).toEqual({ outcome: "moved" });
      expect(await repository.head(flow)).toEqual({ seq: ROOT_SEQ });
    });

    it("finds the latest committed checkpoint at or before a time", async () => {
      const repository = create();
      const flow = newFlow();
      for (let version = 1; version <= 3; version++) await runBatch(repository, flow, version, version * 100);
      await repository.plan(flow, { parent: 3, offsets: {} });
      expect(await repository.latestCommittedAtOrBefore(flow, 50)).toBeUndefined();
      expect((await repository.latestCommittedAtOrBefore(flow, 200))?.seq).toBe(2);
      expect((await repository.latestCommittedAtOrBefore(flow, 250))?.seq).toBe(2);
      expect((await repository.latestCommittedAtOrBefore(flow, 10_000))?.seq).toBe(3);
    });

    it("resumes from HEAD with the checkpoints after it, as head and list give them", async () => {
      const repository = create();
      const flow = newFlow();
      expect(await repository.resume(flow)).toEqual({
        head: { seq: ROOT_SEQ },
        after: [],
        abandonedThrough: ROOT_SEQ,
      });
      for (let version = 1; version <= 3; version++) await runBatch(repository, flow, version, version * 10);
      await repository.moveHead(flow, 2, { expectedHead: 3 });
      await repository.plan(flow, { parent: 2, offsets: { version: 4 } });
      const resumed = await repository.resume(flow);
      expect(resumed.head).toEqual(await repository.head(flow));
      expect(resumed.head.seq).toBe(2);
      expect(resumed.after).toEqual((await repository.list(flow, { afterSeq: 2 })).checkpoints);
      expect(resumed.after.map((c) => [c.seq, c.parent, c.status])).toEqual([
        [3, 2, "COMMITTED"],
        [4, 2, "PLANNED"],
      ]);
      await repository.moveHead(flow, ROOT_SEQ, { expectedHead: 2 });
      const fromRoot = await repository.resume(flow);
      expect(fromRoot.head).toEqual({ seq: ROOT_SEQ });
      expect(fromRoot.after.map((c) => c.seq)).toEqual([1, 2, 3, 4]);
    });

    it("abandons the batches planned before a HEAD move, also a move to where HEAD is", async () => {
      const repository = create();
      const flow = newFlow();
      await repository.plan(flow, { parent: ROOT_SEQ, offsets: { version: 1 } });
      expect((await repository.resume(flow)).abandonedThrough).toBe(ROOT_SEQ);
      expect(await repository.moveHead(flow, ROOT_SEQ, { expectedHead: ROOT_SEQ })).toEqual({
        outcome: "moved",
      });
      const reset = await repository.resume(flow);
      expect(reset.abandonedThrough).toBe(1);
      expect(reset.after.map((c) => [c.seq, c.status])).toEqual([[1, "PLANNED"]]);
      // A batch planned after the move is above the mark; a commit moves HEAD without abandoning.
      await runBatch(repository, flow, 2, 2000);
      await repository.plan(flow, { parent: 2, offsets: { version: 3 } });
      expect((await repository.resume(flow)).abandonedThrough).toBe(1);
      await repository.moveHead(flow, 2, { expectedHead: 2 });
      expect((await repository.resume(flow)).abandonedThrough).toBe(3);
    });

    it("lists checkpoints page by page", async () => {
      const repository = create();
      const flow = newFlow();
      for (let version = 1; version <= 5; version++) await runBatch(repository, flow, version, version);
      const first = await repository.list(flow, { limit: 2 });
      expect(first.checkpoints.map((c) => c.seq)).toEqual([1, 2]);
      const second = await repository.list(flow, { afterSeq: first.nextAfterSeq as number, limit: 2 });
      expect(second.checkpoints.map((c) => c.seq)).toEqual([3, 4]);
      const third = await repository.list(flow, { afterSeq: second.nextAfterSeq as number, limit: 2 });
      expect(third.checkpoints.map((c) => c.seq)).toEqual([5]);
      expect(third.nextAfterSeq).toBeUndefined();
    });

    it("fences plan, commit and HEAD moves on the pipeline's active update", async () => {
      const { checkpoints, pipelines } = createFenced();
      const { pipelineId } = await pipelines.create(definitionNamed("fenced"));
      const flow: FlowRef = { pipelineId, flowId: "ingest" };
      await pipelines.beginUpdate(pipelineId, "u1");

      const planned = await checkpoints.plan(flow, { parent: ROOT_SEQ, offsets: {}, activeUpdateId: "u1" });
      expect(planned.outcome).toBe("planned");
      expect(await checkpoints.plan(flow, { parent: ROOT_SEQ, offsets: {}, activeUpdateId: "u0" })).toEqual({
        outcome: "fenced",
        activeUpdateId: "u1",
      });
      const commit = { tableVersion: 0, committedAt: 1, activeUpdateId: "u0" };
      expect(await checkpoints.commit(flow, 1, commit)).toEqual({ outcome: "fenced", activeUpdateId: "u1" });
      expect((await checkpoints.get(flow, 1))?.status).toBe("PLANNED");

      // Stopped: the pipeline has no active update, and u1 lands nothing more.
      await pipelines.endUpdate(pipelineId, "u1", "IDLE");
      expect(await checkpoints.commit(flow, 1, { ...commit, activeUpdateId: "u1" })).toEqual({
        outcome: "fenced",
      });
      expect(await checkpoints.head(flow)).toEqual({ seq: ROOT_SEQ });

      // The next update commits the batch; HEAD moves only for it.
      await pipelines.beginUpdate(pipelineId, "u2");
      expect((await checkpoints.commit(flow, 1, { ...commit, activeUpdateId: "u2" })).outcome).toBe(
        "committed",
      );
      expect(await checkpoints.moveHead(flow, ROOT_SEQ, { activeUpdateId: "u1" })).toEqual({
        outcome: "fenced",
        activeUpdateId: "u2",
      });
      expect((await checkpoints.head(flow)).seq).toBe(1);
      expect(await checkpoints.moveHead(flow, ROOT_SEQ, { expectedHead: 1, activeUpdateId: "u2" })).toEqual({
        outcome: "moved",
      });
      expect(await checkpoints.moveHead(flow, 1, { expectedHead: 5, activeUpdateId: "u2" })).toEqual({
        outcome: "head-moved",
        head: ROOT_SEQ,
      });
      expect(await checkpoints.moveHead(flow, 7, { activeUpdateId: "u2" })).toEqual({
        outcome: "not-committed",
        seq: 7,
      });
      await pipelines.endUpdate(pipelineId, "u2", "IDLE");
      await pipelines.delete(pipelineId);
    });
  });
}
