import { describe, expect, it } from "vitest";
import { loadSnapshot } from "../../../shared/delta/index.ts";
import { RewindIncompleteError } from "../../../shared/rewind/errors.ts";
import { listRewindPoints } from "../../../shared/rewind/rewind-points.ts";
import { awsPorts } from "../../support/rewind/aws-ports.ts";
import { jsonLines, RewindHarness, TestClock } from "../../support/rewind/rewind-harness.ts";
import { BAD_SQL, GOOD_SQL, scenarioPipeline } from "./pipeline-definitions.ts";

/**
 * The rewind domain through the real SDK against the AWS stand-ins (S3 with conditional writes,
 * DynamoDB Local): points in the event log table, HEAD moves in the checkpoints table, the rewind
 * block on the pipeline item.
 */
describe("rewind on the AWS stand-ins", () => {
  const harness = () => new RewindHarness({ clock: new TestClock(Date.now()), ports: awsPorts });

  it("captures points, refuses a dry run's changes, rewinds, blocks after a failure, converges, replays", async () => {
    const h = harness();
    await h.deploy(scenarioPipeline(h.landingUri, GOOD_SQL));
    await h.land("a.json", jsonLines(1, 4));
    await h.run();
    // The point the update captured at its end.
    const point = (await listRewindPoints(h.env()))[0]!;
    await h.deploy(scenarioPipeline(h.landingUri, BAD_SQL));
    await h.land("b.json", jsonLines(5, 4));
    await h.run();
    expect((await listRewindPoints(h.env())).map((p) => p.rewindPointId).slice(1)).toEqual([
      point.rewindPointId,
    ]);

    const dry = await h.rewind({ rewind_point_id: point.rewindPointId, dry_run: true });
    expect((await h.rows("cleaned")).length).toBe(8);
    expect((await listRewindPoints(h.env())).map((p) => p.rewindPointId)).toContain(dry.summaryEventId);

    h.faults = (key) => (key.includes("/totals/_delta_log/") ? new Error("injected") : undefined);
    await expect(h.rewind({ rewind_point_id: dry.summaryEventId })).rejects.toThrow(/injected/);
    h.faults = () => undefined;
    await expect(h.run()).rejects.toThrow(RewindIncompleteError);

    const rawVersion = (await loadSnapshot(h.tableStore("raw"))).version;
    await h.rewind({ rewind_point_id: dry.summaryEventId });
    expect((await loadSnapshot(h.tableStore("raw"))).version).toBe(rawVersion);
    expect((await h.pipelines.get(h.pipelineId))!.rewindBlocked).toBe(false);
    const heads = await h.checkpoints.head({ pipelineId: h.pipelineId, flowId: "clean" });
    expect(heads.seq).toBe(point.cut.flows.get("clean"));

    await h.deploy(scenarioPipeline(h.landingUri, GOOD_SQL));
    await h.run();
    const cleaned = await h.rows("cleaned");
    expect(cleaned.map((r) => [Number(r["id"]), Number(r["amount2"])])).toEqual(
      Array.from({ length: 8 }, (_, i) => [i + 1, (i + 1) * 20]),
    );
  });
});
