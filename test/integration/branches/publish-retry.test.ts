import { describe, expect, it } from "vitest";
import { parseWith } from "../../../shared/api/request-body.ts";
import { startUpdateBody } from "../../../shared/api/request-schemas.ts";
import { startUpdateOrBranch } from "../../../shared/control/branches/branch-request.ts";
import { publishBranch } from "../../../shared/control/branches/publish-branch.ts";
import { readHistory } from "../../../shared/delta/index.ts";
import { captureRewindPoint } from "../../../shared/rewind/rewind-points.ts";
import type { CheckpointsRepository } from "../../../shared/store/checkpoints-repository.ts";
import { jsonLines, RewindHarness } from "../../support/rewind/rewind-harness.ts";
import { BAD_SQL, scenarioPipeline } from "../rewind/pipeline-definitions.ts";

/**
 * A publish is an update of the state machine (docs/branches.md "Publish"): its RewindDataset step
 * for a table is idempotent, so a Lambda that dies after the table's RESTORE commit (before its
 * checkpoints move) is retried and the publish converges: each table RESTOREd once, each flow's
 * checkpoint planned and committed once, one branch_published event, the update COMPLETED.
 */
describe("publish, crashed after the first table's RESTORE", () => {
  it("is retried by the state machine and converges: one RESTORE per table, checkpoints moved once", async () => {
    const h = new RewindHarness({ driver: { sleep: () => Promise.resolve() } });
    await h.deploy(scenarioPipeline(h.landingUri));
    await h.land("f0.json", jsonLines(1, 3));
    await h.run();
    const point = (await captureRewindPoint(h.env(), "update-end"))!;
    const good = { raw: await h.rows("raw"), cleaned: await h.rows("cleaned") };
    await h.deploy(scenarioPipeline(h.landingUri, BAD_SQL));
    await h.land("f1.json", jsonLines(4, 3));
    await h.run();
    await startUpdateOrBranch(
      h.plane,
      h.pipelineId,
      parseWith(startUpdateBody, { rewind_spec: { rewind_point_id: point.rewindPointId, branch: "fix" } }),
    );

    // The Lambda dies once, after raw's RESTORE, as it commits raw's flow's checkpoint.
    const checkpoints = h.checkpoints as { commit: CheckpointsRepository["commit"] };
    const commit = checkpoints.commit.bind(h.checkpoints);
    let crashes = 0;
    checkpoints.commit = (flow, seq, request) => {
      if (flow.flowId === "ingest" && crashes === 0) {
        crashes++;
        throw Object.assign(new Error("the function's sandbox died"), { name: "Lambda.ServiceException" });
      }
      return commit(flow, seq, request);
    };

    const published = await publishBranch(h.plane, h.pipelineId, "fix");
    const driven = await h.executions.settled(published.update_id);
    expect(driven.error).toBeUndefined();
    expect(driven.state).toBe("COMPLETED");
    expect(crashes).toBe(1);
    const update = (await h.updates.get(h.pipelineId, published.update_id))!;
    expect(update.intent).toEqual({ kind: "publish", branch: "fix" });

    // Live is the branch (the point's rows), each table RESTOREd once, by this update.
    expect(await h.rows("raw")).toEqual(good.raw);
    expect(await h.rows("cleaned")).toEqual(good.cleaned);
    for (const dataset of ["raw", "cleaned"]) {
      const restores = (await readHistory(h.tableStore(dataset))).filter((c) => c.operation === "RESTORE");
      expect(restores, dataset).toHaveLength(1);
      expect(restores[0]!.operationParameters).toMatchObject({
        branch: "fix",
        updateId: published.update_id,
      });
    }
    // Each flow's checkpoint: planned once by the publish, committed, HEAD.
    for (const flowId of ["ingest", "clean"]) {
      const ref = { pipelineId: h.pipelineId, flowId };
      const mine = (await h.checkpoints.list(ref)).checkpoints.filter(
        (c) => c.updateId === published.update_id,
      );
      expect(
        mine.map((c) => c.status),
        flowId,
      ).toEqual(["COMMITTED"]);
      expect((await h.checkpoints.head(ref)).seq).toBe(mine[0]!.seq);
    }
    const events = await h.eventsOf("branch_published");
    expect(events).toHaveLength(1);
    expect(events[0]!.origin.update_id).toBe(published.update_id);
    expect(await h.rewindBlock()).toEqual({ blocked: false });

    // The replay on live continues from the branch's checkpoints: it reads only the second file.
    await h.deploy(scenarioPipeline(h.landingUri));
    await h.run();
    expect((await h.rows("raw")).map((r) => Number(r["id"]))).toEqual([1, 2, 3, 4, 5, 6]);
  });
});
