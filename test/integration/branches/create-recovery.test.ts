import { describe, expect, it } from "vitest";
import { parseWith } from "../../../shared/api/request-body.ts";
import { startUpdateBody } from "../../../shared/api/request-schemas.ts";
import { startUpdateOrBranch } from "../../../shared/control/branches/branch-request.ts";
import { getBranch, listBranches } from "../../../shared/control/branches/branch-views.ts";
import { readHistory } from "../../../shared/delta/index.ts";
import { branchTableStore } from "../../../shared/store/branch-table-store.ts";
import { branchRecordKey } from "../../../shared/store/bucket-layout.ts";
import { captureRewindPoint } from "../../../shared/rewind/rewind-points.ts";
import { jsonLines, RewindHarness } from "../../support/rewind/rewind-harness.ts";
import { scenarioPipeline } from "../rewind/pipeline-definitions.ts";

/**
 * A branch's creation that crashes after its logs and before its record leaves orphan logs
 * (docs/branches.md "What a branch holds"): no listing shows them, and creating the branch again
 * replaces them instead of meeting their commits.
 */
describe("a branch's creation, crashed before its record", () => {
  it("is invisible, and creating the branch again replaces its orphan logs", async () => {
    const h = new RewindHarness();
    await h.deploy(scenarioPipeline(h.landingUri));
    await h.land("f0.json", jsonLines(1, 3));
    await h.run();
    const point = (await captureRewindPoint(h.env(), "update-end"))!;
    const create = () =>
      startUpdateOrBranch(
        h.plane,
        h.pipelineId,
        parseWith(startUpdateBody, { rewind_spec: { rewind_point_id: point.rewindPointId, branch: "fix" } }),
      );

    // The crash: the record's write fails, after every log was made.
    const record = branchRecordKey(h.pipelineId, "fix");
    h.faults = (key) => (key === record ? new Error("the function's sandbox died") : undefined);
    await expect(create()).rejects.toThrow("sandbox died");
    h.faults = () => undefined;
    for (const dataset of ["raw", "cleaned", "totals"])
      expect(await readHistory(branchTableStore(h.tableStore(dataset), "fix")), dataset).toHaveLength(1);
    expect((await listBranches(h.plane, h.pipelineId, {})).branches).toEqual([]);
    await expect(getBranch(h.plane, h.pipelineId, "fix")).rejects.toMatchObject({
      errorCode: "BRANCH_NOT_FOUND",
    });

    // Made again: it succeeds, over logs of one commit each.
    await create();
    expect((await listBranches(h.plane, h.pipelineId, {})).branches.map((b) => b.name)).toEqual(["fix"]);
    const shown = await getBranch(h.plane, h.pipelineId, "fix");
    expect(shown.branch.tables.map((t) => t.branch_version)).toEqual([0, 0, 0]);
  });
});
