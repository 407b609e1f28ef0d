import { describe, expect, it } from "vitest";
import { loadSnapshot, TableNotFoundError } from "../../../shared/delta/index.ts";
import { captureRewindPoint } from "../../../shared/rewind/rewind-points.ts";
import { ROOT_SEQ } from "../../../shared/store/checkpoints-repository.ts";
import { jsonLines, RewindHarness } from "../../support/rewind/rewind-harness.ts";
import { BAD_SQL, GOOD_SQL, scenarioPipeline, withFlagged } from "./pipeline-definitions.ts";

/**
 * A bad deploy that also added datasets (issue 33): `flagged`, a streaming table of `cleaned`, a
 * view over it and a materialized view counting it. A rewind of everything to the point before the
 * deploy empties what the point does not know (TRUNCATE, or DROP on request) with the rest; the
 * replay with the fix then fills them from their sources' start, and nothing of the bad deploy
 * remains.
 */

function badDeploy(h: RewindHarness, sql: string) {
  const definition = withFlagged(scenarioPipeline(h.landingUri, sql));
  return {
    ...definition,
    datasets: [
      ...definition.datasets,
      { name: "flag_counts", type: "materialized_view", sql: "SELECT count(*) AS n FROM flagged" },
    ],
  };
}

async function pipelineAfterBadDeploy() {
  const h = new RewindHarness();
  await h.deploy(scenarioPipeline(h.landingUri));
  await h.land("a.json", jsonLines(1, 3));
  await h.run();
  const point = (await captureRewindPoint(h.env()))!;
  h.clock.advance(60_000);
  await h.deploy(badDeploy(h, BAD_SQL));
  await h.land("b.json", jsonLines(4, 3));
  await h.run();
  // Before the deploy's batch, cleaned held ids 1–3 (good); flagged read them all, then the bad batch.
  expect(await flaggedAmounts(h)).toEqual([60, 120, 150, 180]);
  return { h, point };
}

/** `flagged` as the good transform makes it: ids 3–6, amount * 2. */
const GOOD_FLAGGED = [60, 80, 100, 120];

async function flaggedAmounts(h: RewindHarness): Promise<number[]> {
  return (await h.rows("flagged")).map((r) => Number(r["amount2"]));
}

describe("rewinding past a deploy that added datasets", () => {
  it("the dry run says which datasets are emptied and which views read them, and changes nothing", async () => {
    const { h, point } = await pipelineAfterBadDeploy();
    const before = await loadSnapshot(h.tableStore("flagged"));
    const dry = await h.rewind({ rewind_point_id: point.rewindPointId, dry_run: true });
    expect(dry.datasets).toEqual([
      { dataset: "raw", action: "RESTORE", targetVersion: point.cut.datasets.get("raw")!.version },
      { dataset: "cleaned", action: "RESTORE", targetVersion: point.cut.datasets.get("cleaned")!.version },
      { dataset: "totals", action: "RESTORE", targetVersion: point.cut.datasets.get("totals")!.version },
      { dataset: "flagged", action: "TRUNCATE", targetVersion: null },
      { dataset: "flag_counts", action: "TRUNCATE", targetVersion: null },
    ]);
    expect(dry.views).toEqual(["main.shop.flagged_view"]);
    const [planning] = (await h.eventsOf("planning_information")).filter(
      (e) => e.origin.update_id === dry.updateId,
    );
    expect(planning!.details["planning_information"]).toMatchObject({
      datasets: expect.arrayContaining([
        {
          dataset: "main.shop.flagged",
          action: "TRUNCATE",
          target_version: null,
          flows: [{ flow: "flag", seq: 0 }],
        },
      ]),
    });
    expect((await loadSnapshot(h.tableStore("flagged"))).version).toBe(before.version);
    const drop = await h.rewind({
      rewind_point_id: point.rewindPointId,
      dry_run: true,
      not_in_point_mode: "drop",
    });
    expect(drop.datasets.filter((d) => d.targetVersion === null).map((d) => d.action)).toEqual([
      "DROP",
      "DROP",
    ]);
  });

  it("empties them with a TRUNCATE commit and resets their flows, and the replay fills them from the start", async () => {
    const { h, point } = await pipelineAfterBadDeploy();
    const flaggedBefore = await loadSnapshot(h.tableStore("flagged"));
    await h.rewind({ rewind_point_id: point.rewindPointId });

    const flagged = await loadSnapshot(h.tableStore("flagged"));
    expect(flagged.version).toBe(flaggedBefore.version + 1);
    expect(flagged.metadata.id).toBe(flaggedBefore.metadata.id); // its history stays
    expect(flagged.files.size).toBe(0);
    expect(await h.rows("flagged")).toEqual([]);
    expect(await h.rows("flag_counts")).toEqual([]);
    expect((await h.checkpoints.head({ pipelineId: h.pipelineId, flowId: "flag" })).seq).toBe(ROOT_SEQ);
    const progress = (await h.eventsOf("rewind_progress")).find((e) => e.origin.dataset_name === "flagged")!;
    expect(progress.message).toMatch(
      /^Emptied main\.shop\.flagged, which the rewind point does not know \(TRUNCATE at version/,
    );

    await h.deploy(badDeploy(h, GOOD_SQL));
    await h.run();
    expect((await h.rows("cleaned")).map((r) => Number(r["amount2"]))).toEqual([20, 40, 60, 80, 100, 120]);
    expect(await flaggedAmounts(h)).toEqual(GOOD_FLAGGED);
    expect(await h.rows("flag_counts", "n")).toEqual([{ n: BigInt(GOOD_FLAGGED.length) }]);

    // Its history stayed: a rewind back to a point on the abandoned timeline still restores it.
    const later = (await captureRewindPoint(h.env()))!;
    await h.rewind({ rewind_point_id: later.rewindPointId, dry_run: true });
  });

  it("drops them when asked (not_in_point_mode DROP), and the replay recreates them", async () => {
    const { h, point } = await pipelineAfterBadDeploy();
    const idBefore = (await loadSnapshot(h.tableStore("flagged"))).metadata.id;
    await h.rewind({ rewind_point_id: point.rewindPointId, not_in_point_mode: "DROP" });
    await expect(loadSnapshot(h.tableStore("flagged"))).rejects.toThrow(TableNotFoundError);
    await expect(loadSnapshot(h.tableStore("flag_counts"))).rejects.toThrow(TableNotFoundError);

    await h.deploy(badDeploy(h, GOOD_SQL));
    await h.run();
    expect((await loadSnapshot(h.tableStore("flagged"))).metadata.id).not.toBe(idBefore);
    expect(await flaggedAmounts(h)).toEqual(GOOD_FLAGGED);
    expect(await h.rows("flag_counts", "n")).toEqual([{ n: BigInt(GOOD_FLAGGED.length) }]);
  });
});
