import { describe, expect, it } from "vitest";
import { LAST_CHECKPOINT_KEY } from "../../../shared/delta/index.ts";
import { captureRewindPoint } from "../../../shared/rewind/rewind-points.ts";
import { jsonLines, RewindHarness } from "../../support/rewind/rewind-harness.ts";
import { scenarioPipeline } from "./pipeline-definitions.ts";

describe("rewind across Delta log checkpoints", () => {
  it("rewinds to a version before the tables' first log checkpoint and replays past it", async () => {
    const h = new RewindHarness();
    await h.deploy(scenarioPipeline(h.landingUri));
    let early;
    for (let i = 0; i < 12; i++) {
      await h.land(`f${i}.json`, jsonLines(i * 2 + 1, 2));
      await h.run();
      if (i === 3) early = (await captureRewindPoint(h.env()))!;
    }
    expect(await h.tableStore("totals").head(LAST_CHECKPOINT_KEY)).toBeDefined();
    await h.rewind({ rewind_point_id: early!.rewindPointId });
    expect((await h.rows("cleaned")).map((r) => Number(r["id"]))).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    await h.run();
    expect((await h.rows("cleaned")).map((r) => Number(r["id"]))).toEqual(
      Array.from({ length: 24 }, (_, i) => i + 1),
    );
    expect((await h.rows("totals", "region")).reduce((n, r) => n + Number(r["n"]), 0)).toBe(24);
  });
});
