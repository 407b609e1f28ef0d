import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { stopPipeline } from "../../../shared/control/updates/stop-update.ts";
import { RefreshIncompleteError, RewindBeforeFullRefreshError } from "../../../shared/rewind/errors.ts";
import { ROOT_SEQ } from "../../../shared/store/checkpoints-repository.ts";
import { jsonLines, RewindHarness } from "../../support/rewind/rewind-harness.ts";
import { scenarioPipeline, withFlagged } from "./pipeline-definitions.ts";

/**
 * A full refresh of several datasets (raw, cleaned, totals, flagged) stopped before any one of its
 * checkpoint moves to the root, then either way out (a full refresh, or a rewind to a point before
 * it), then an ordinary run: every landed row is in every streaming table exactly once.
 */

const ids = (rows: Record<string, unknown>[]) => rows.map((r) => Number(r["id"]));
const iso = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, "Z");
/** The flows the refresh moves to the root: ingest, clean, flag. One more means no stop at all. */
const ROOT_MOVES = 3;

async function stoppedThenWayOut(stopAt: number, wayOut: "full refresh" | "rewind") {
  const h = new RewindHarness();
  await h.deploy(withFlagged(scenarioPipeline(h.landingUri)));
  await h.land("f0.json", jsonLines(1, 3));
  await h.run();
  h.clock.advance(10_000);
  const beforeRefresh = iso(h.clock.peek());
  h.clock.advance(10_000);

  const moveHead = h.checkpoints.moveHead.bind(h.checkpoints);
  let moves = 0;
  h.checkpoints.moveHead = async (ref, seq, options) => {
    if (seq === ROOT_SEQ && ++moves === stopAt) await stopPipeline(h.plane, h.pipelineId);
    return moveHead(ref, seq, options);
  };
  const refresh = await h.start({ full_refresh: true });
  h.checkpoints.moveHead = moveHead;
  expect(refresh.state).toBe(stopAt <= ROOT_MOVES ? "CANCELED" : "COMPLETED");
  await h.land("f1.json", jsonLines(4, 3));
  if (stopAt <= ROOT_MOVES) await expect(h.start({})).rejects.toThrow(RefreshIncompleteError);

  if (wayOut === "full refresh") await h.refresh({ full_refresh: true });
  else {
    // A dataset whose reset finished (its `dataset_reset` recorded) refuses a rewind before it, loudly.
    const refused = await h.rewind({ rewind_timestamp: beforeRefresh }).then(
      () => undefined,
      (error: unknown) => error,
    );
    if (refused !== undefined) expect(refused).toBeInstanceOf(RewindBeforeFullRefreshError);
    // A table the refresh dropped cannot be restored: the mark stays and the full refresh is the way.
    if ((await h.pipelines.get(h.pipelineId))?.resetUnderWay) {
      await expect(h.start({})).rejects.toThrow(RefreshIncompleteError);
      await h.refresh({ full_refresh: true });
    }
  }
  await h.run();
  const all = [1, 2, 3, 4, 5, 6];
  expect(ids(await h.rows("raw"))).toEqual(all);
  expect(ids(await h.rows("cleaned"))).toEqual(all);
  const flagged = ids(await h.rows("flagged"));
  expect(new Set(flagged).size).toBe(flagged.length);
  expect((await h.pipelines.get(h.pipelineId))?.resetUnderWay).toBeUndefined();
}

describe("a refresh of several datasets stopped at any point", () => {
  it("loses and doubles nothing after either way out", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: ROOT_MOVES + 1 }),
        fc.constantFrom("full refresh" as const, "rewind" as const),
        stoppedThenWayOut,
      ),
      { numRuns: 8 },
    );
  });
});
