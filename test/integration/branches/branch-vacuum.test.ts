import { describe, expect, it } from "vitest";
import { parseWith } from "../../../shared/api/request-body.ts";
import { startUpdateBody } from "../../../shared/api/request-schemas.ts";
import { startUpdateOrBranch } from "../../../shared/control/branches/branch-request.ts";
import { publishBranch } from "../../../shared/control/branches/publish-branch.ts";
import { viewStateAt } from "../../../shared/engine/incremental-view.ts";
import { captureRewindPoint } from "../../../shared/rewind/rewind-points.ts";
import { vacuumDataset } from "../../../shared/rewind/rewind-vacuum.ts";
import { jsonLines, RewindHarness } from "../../support/rewind/rewind-harness.ts";
import { scenarioPipeline } from "../rewind/pipeline-definitions.ts";

/**
 * VACUUM keeps what Ebb reads of a branch (docs/branches.md "VACUUM"): for a materialized view, the
 * incremental state the branch's snapshot continues from, once no live point needs it, so the view's
 * first refresh after the branch is published continues from it.
 */
describe("a branch of a materialized view, VACUUMed past every point", () => {
  it("keeps the view state the branch continues from; publish then a run refresh on it", async () => {
    const h = new RewindHarness({ driver: { sleep: () => Promise.resolve() } });
    await h.deploy(scenarioPipeline(h.landingUri, undefined, { "pipelines.rewind.retention": "1 hour" }));
    await h.land("f0.json", jsonLines(1, 3));
    await h.run();
    const totals = h.tableStore("totals");
    const point = (await captureRewindPoint(h.env(), "update-end"))!;
    const atPoint = point.cut.datasets.get("totals")!.version;
    const state = (await viewStateAt(totals, atPoint))!;
    expect(state).toEqual(expect.any(String));
    await h.land("f1.json", jsonLines(4, 3));
    await h.run();
    await startUpdateOrBranch(
      h.plane,
      h.pipelineId,
      parseWith(startUpdateBody, { rewind_spec: { rewind_point_id: point.rewindPointId, branch: "fix" } }),
    );

    // Every point expires; VACUUM with no retention.
    h.clock.advance(2 * 3_600_000);
    const vacuum = await vacuumDataset(h.env(), "totals", { retentionHours: 0, allowShortRetention: true });
    expect(vacuum.protectedVersions).toEqual([]);
    expect(vacuum.protectedBranches).toEqual(["fix"]);
    expect(vacuum.stateFilesToDelete).not.toContain(state);
    expect(await h.env().stateStore.head(state)).toBeDefined();

    const published = await publishBranch(h.plane, h.pipelineId, "fix");
    expect((await h.executions.settled(published.update_id)).state).toBe("COMPLETED");
    await h.run();
    const rows = await h.rows("totals", "region");
    expect(rows.reduce((n, r) => n + Number(r["n"]), 0)).toBe(6);
  });
});
