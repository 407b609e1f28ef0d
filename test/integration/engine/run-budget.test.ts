import { afterAll, describe, expect, it } from "vitest";
import type { UpdateTask } from "../../../shared/control/updates/update-tasks.ts";
import { EngineHarness, jsonLines, rawIdsTable } from "./engine-harness.ts";

/**
 * A flow whose backlog outlasts one RunFlow invocation's budget: the task throws
 * `RunBudgetSpentError`, the state machine's Retry invokes it again, and each invocation resumes
 * where the last batch ended — every row once. The clock moves a second each time it is read, so an
 * invocation's 1.5 s budget is spent after its first batch.
 */
describe("a flow longer than one invocation's budget", () => {
  let now = Date.now();
  const harness = new EngineHarness({ clock: () => (now += 1000), budgetMs: 1500 });
  afterAll(() => harness.close());

  it("runs on across invocations, one batch each, and completes with every row once", async () => {
    const pipeline = await harness.validate({
      name: "budget",
      catalog: "main",
      schema: "budget",
      datasets: [rawIdsTable(harness, { max_files_per_batch: 1 })],
    });
    for (let i = 0; i < 3; i++) await harness.land(`${i}.json`, jsonLines(i * 2 + 1, 2));
    const tasks: UpdateTask[] = [];
    harness.onTask = (state) => void tasks.push(state);
    const run = await harness.run(pipeline);
    expect(run.state).toBe("COMPLETED");
    // Three batches in three invocations (the last one also finds nothing more).
    expect(tasks.filter((t) => t === "RunFlow")).toHaveLength(3);
    expect(run.flows["ingest"]).toMatchObject({ batches: 1 });
    const ids = (await harness.rows(pipeline, "raw", "id")).map((r) => Number(r["id"]));
    expect(ids).toEqual([1, 2, 3, 4, 5, 6]);
  });
});
