import { afterAll, describe, expect, it } from "vitest";
import type { UpdateTask } from "../../../shared/control/updates/update-tasks.ts";
import { DeltaTable } from "../../../shared/delta/index.ts";
import { DatasetCatalog } from "../../../shared/engine/dataset-catalog.ts";
import type { CrashHook } from "../../../shared/engine/crash-points.ts";
import type { ValidatedPipeline } from "../../../shared/pipeline/validate-pipeline.ts";
import { EngineHarness, jsonLines, rawIdsTable } from "./engine-harness.ts";

/**
 * A batch whose commit conflicts with another writer's (a RESTORE of the table through the API lands
 * between the batch's data files and its commit): the write fails with TableWriteConflictError
 * (RESOURCE_CONFLICT, naming the table), the state machine retries the task, and the redone batch
 * lands after the RESTORE — every row once, the update COMPLETED.
 */
describe("a batch that conflicts with a concurrent commit", () => {
  let pipeline: ValidatedPipeline | undefined;
  let restored = false;
  const restoreOnce: CrashHook = async (point) => {
    if (restored || point !== "after-data-files" || !pipeline) return;
    restored = true;
    const table = await DeltaTable.open(new DatasetCatalog(pipeline, harness.store).tableStore("raw"));
    try {
      await table.restore({ to: { version: table.snapshot.version } });
    } finally {
      await table.close();
    }
  };
  const harness = new EngineHarness({ crash: restoreOnce });
  afterAll(() => harness.close());

  it("is retried against the table as it now is, and lands every row once", async () => {
    pipeline = await harness.validate({
      name: "conflict",
      catalog: "main",
      schema: "conflict",
      datasets: [rawIdsTable(harness)],
    });
    await harness.land("1.json", jsonLines(1, 3));
    const tasks: UpdateTask[] = [];
    harness.onTask = (state) => void tasks.push(state);
    const run = await harness.run(pipeline);
    expect(run.state).toBe("COMPLETED");
    expect(restored).toBe(true);
    // The first RunFlow lost its commit to the RESTORE; the retry landed the batch.
    expect(tasks.filter((t) => t === "RunFlow")).toHaveLength(2);
    const ids = (await harness.rows(pipeline, "raw", "id")).map((r) => Number(r["id"]));
    expect(ids).toEqual([1, 2, 3]);
  });
});
