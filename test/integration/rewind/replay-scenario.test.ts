import { describe, expect, it } from "vitest";
import { loadSnapshot } from "../../../shared/delta/index.ts";
import { captureRewindPoint, listRewindPoints } from "../../../shared/rewind/rewind-points.ts";
import { jsonLines, RewindHarness } from "../../support/rewind/rewind-harness.ts";
import { BAD_SQL, GOOD_SQL, scenarioPipeline } from "./pipeline-definitions.ts";

/**
 * The rewind-and-replay scenario users come for: a bad deploy writes wrong values for two batches; the user rewinds to the
 * last point before the deploy, deploys the fix and replays. Every table then equals what a pipeline
 * that never had the bad deploy holds, and the data from before the point is untouched.
 */
describe("rewind and replay after a bad deploy", () => {
  it("restores, replays only the affected batches, and ends equal to a correct pipeline", async () => {
    const h = new RewindHarness();
    const correct = new RewindHarness();
    const batches = [jsonLines(1, 5), jsonLines(6, 5), jsonLines(11, 5), jsonLines(16, 5), jsonLines(21, 5)];

    await h.deploy(scenarioPipeline(h.landingUri, GOOD_SQL));
    await correct.deploy(scenarioPipeline(correct.landingUri, GOOD_SQL));
    for (const [i, text] of batches.entries()) {
      await correct.land(`batch-${i}.json`, text);
      await correct.run();
    }

    // Two good batches, a point at the end of each update.
    for (const i of [0, 1]) {
      await h.land(`batch-${i}.json`, batches[i]!);
      await h.run();
      await captureRewindPoint(h.env(), "update-end");
    }
    const [pointBeforeDeploy] = await listRewindPoints(h.env());
    const cleanedAtPoint = pointBeforeDeploy!.cut.datasets.get("cleaned")!.version;
    const cleanedStore = h.tableStore("cleaned");
    const historyBefore: string[][] = [];
    for (let v = 0; v <= cleanedAtPoint; v++) {
      historyBefore.push([...(await loadSnapshot(cleanedStore, { version: v })).files.keys()].sort());
    }
    const rowsAtPoint = await h.rows("cleaned");

    // The bad deploy writes wrong values for two batches.
    await h.deploy(scenarioPipeline(h.landingUri, BAD_SQL));
    for (const i of [2, 3]) {
      await h.land(`batch-${i}.json`, batches[i]!);
      await h.run();
      await captureRewindPoint(h.env(), "update-end");
    }
    const wrong = (await h.rows("cleaned")).filter((r) => Number(r["amount2"]) === Number(r["id"]) * 30);
    expect(wrong.map((r) => Number(r["id"]))).toEqual([11, 12, 13, 14, 15, 16, 17, 18, 19, 20]);

    // Rewind to the last point before the deploy, deploy the fix, land more, replay.
    const result = await h.rewind({ rewind_point_id: pointBeforeDeploy!.rewindPointId });
    expect(result.dryRun).toBe(false);
    expect(await h.rows("cleaned")).toEqual(rowsAtPoint);
    await h.deploy(scenarioPipeline(h.landingUri, GOOD_SQL));
    await h.land("batch-4.json", batches[4]!);
    await h.run();

    expect(await h.rows("raw")).toEqual(await correct.rows("raw"));
    expect(await h.rows("cleaned")).toEqual(await correct.rows("cleaned"));
    expect(await h.rows("totals", "region")).toEqual(await correct.rows("totals", "region"));

    // Data from before the point is untouched: the same versions hold the same files, and the
    // restored table holds exactly those files again (a metadata-only RESTORE, no rewrite).
    const store = h.tableStore("cleaned");
    for (let v = 0; v <= cleanedAtPoint; v++) {
      expect([...(await loadSnapshot(store, { version: v })).files.keys()].sort()).toEqual(historyBefore[v]);
    }
    const current = await loadSnapshot(store);
    for (const path of historyBefore[cleanedAtPoint]!) expect(current.files.has(path)).toBe(true);
  });
});
