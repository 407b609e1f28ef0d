import { describe, expect, it } from "vitest";
import { finishUpdate } from "../../../shared/control/updates/steps/finish-step.ts";
import { finishRewind } from "../../../shared/control/updates/steps/rewind-step.ts";
import { captureRewindPoint } from "../../../shared/rewind/rewind-points.ts";
import { jsonLines, RewindHarness } from "../../support/rewind/rewind-harness.ts";
import { scenarioPipeline } from "./pipeline-definitions.ts";

/**
 * A state-machine step that runs again (a task's Retry after a timeout, a crash after its work) does
 * not publish its lifecycle event again (docs/events.md "Once per occurrence"): FinishRewind and
 * FinishUpdate, called a second time after their work was done, publish nothing new.
 */
describe("lifecycle events of retried steps", () => {
  it("are published once per occurrence: the rewind's end and the update's end", async () => {
    const h = new RewindHarness();
    await h.deploy(scenarioPipeline(h.landingUri));
    await h.land("f0.json", jsonLines(1, 3));
    const refresh = await h.refresh({ full_refresh: true });
    const point = (await captureRewindPoint(h.env(), "update-end"))!;
    await h.land("f1.json", jsonLines(4, 3));
    const run = await h.run();
    const rewind = await h.rewind({ rewind_point_id: point.rewindPointId });
    const once = h.published.map((e) => `${e["detail-type"]} ${e.detail.update_id}`);
    expect(once.filter((e) => !e.endsWith(run.updateId))).toEqual([
      `Update Started ${refresh.updateId}`,
      `Full Refresh ${refresh.updateId}`,
      `Update Completed ${refresh.updateId}`,
      `Update Started ${rewind.updateId}`,
      `Rewind Completed ${rewind.updateId}`,
      `Update Completed ${rewind.updateId}`,
    ]);

    // Each step again, as a retry would run it.
    await finishUpdate(h.plane, { pipelineId: h.pipelineId, updateId: refresh.updateId });
    await finishRewind(h.plane, { pipelineId: h.pipelineId, updateId: rewind.updateId });
    await finishUpdate(h.plane, { pipelineId: h.pipelineId, updateId: rewind.updateId });
    expect(h.published.map((e) => `${e["detail-type"]} ${e.detail.update_id}`)).toEqual(once);
  });
});
