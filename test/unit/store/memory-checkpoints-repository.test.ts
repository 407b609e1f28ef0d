import { describe, expect, it } from "vitest";
import { MemoryCheckpointsRepository } from "../../../shared/store/memory-checkpoints-repository.ts";
import { MemoryPipelinesRepository } from "../../../shared/store/memory-pipelines-repository.ts";
import { ROOT_SEQ } from "../../../shared/store/checkpoints-repository.ts";
import { checkpointsRepositoryContract } from "./checkpoints-repository-contract.ts";

checkpointsRepositoryContract(
  "MemoryCheckpointsRepository",
  (now) => new MemoryCheckpointsRepository(now),
  () => {
    const pipelines = new MemoryPipelinesRepository();
    const checkpoints = new MemoryCheckpointsRepository(
      Date.now,
      async (pipelineId) => (await pipelines.get(pipelineId))?.activeUpdateId,
    );
    return { checkpoints, pipelines };
  },
);

describe("MemoryCheckpointsRepository", () => {
  it("never reuses a seq, even after the highest checkpoint is forgotten", async () => {
    const repository = new MemoryCheckpointsRepository();
    const flow = { pipelineId: "p", flowId: "f" };
    await repository.plan(flow, { parent: ROOT_SEQ, offsets: {} });
    await repository.plan(flow, { parent: ROOT_SEQ, offsets: {} });
    repository.forget(flow, 2);
    const next = await repository.plan(flow, { parent: ROOT_SEQ, offsets: {} });
    expect(next.outcome === "planned" && next.checkpoint.seq).toBe(3);
  });

  it("hands out copies, so a caller cannot change what is stored", async () => {
    const repository = new MemoryCheckpointsRepository();
    const flow = { pipelineId: "p", flowId: "f" };
    const offsets = { files: ["a"] };
    const planned = await repository.plan(flow, { parent: ROOT_SEQ, offsets });
    offsets.files.push("b");
    if (planned.outcome === "planned") (planned.checkpoint.offsets["files"] as string[]).push("c");
    expect((await repository.get(flow, 1))?.offsets).toEqual({ files: ["a"] });
  });
});
