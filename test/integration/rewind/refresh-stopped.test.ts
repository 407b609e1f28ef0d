import { describe, expect, it } from "vitest";
import { getPipelineResponse } from "../../../shared/api/response-schemas.ts";
import { getPipeline } from "../../../shared/control/pipelines/pipeline-commands.ts";
import { stopPipeline } from "../../../shared/control/updates/stop-update.ts";
import { RefreshIncompleteError } from "../../../shared/rewind/errors.ts";
import { ROOT_SEQ } from "../../../shared/store/checkpoints-repository.ts";
import { jsonLines, RewindHarness } from "../../support/rewind/rewind-harness.ts";
import { scenarioPipeline } from "./pipeline-definitions.ts";

/**
 * A refresh stopped between resetting a table and moving its flows' HEAD to the root (semantics.md
 * "Refresh and reset"): the pipeline refuses updates that would read on from the old checkpoints into
 * the emptied table, until a full refresh of it, or a rewind to a point before it, converges.
 */

const ids = (rows: Record<string, unknown>[]) => rows.map((r) => Number(r["id"]));
const iso = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, "Z");

/** `cleaned` holds ids 1 and 2; a full refresh of it is stopped right after its table's reset. */
async function stoppedRefresh(resetMode?: string) {
  const h = new RewindHarness();
  const definition = scenarioPipeline(h.landingUri);
  if (resetMode) (definition.datasets[1] as { reset_mode?: string }).reset_mode = resetMode;
  await h.deploy(definition);
  await h.land("f0.json", jsonLines(1, 2));
  await h.run();
  expect(ids(await h.rows("cleaned"))).toEqual([1, 2]);
  h.clock.advance(10_000);
  const beforeRefresh = iso(h.clock.peek());
  h.clock.advance(10_000);

  // The stop lands between the table's reset and the first HEAD move of flow `clean`.
  const moveHead = h.checkpoints.moveHead.bind(h.checkpoints);
  let armed = true;
  h.checkpoints.moveHead = async (ref, seq, options) => {
    if (armed && ref.flowId === "clean" && seq === ROOT_SEQ) {
      armed = false;
      await stopPipeline(h.plane, h.pipelineId);
    }
    return moveHead(ref, seq, options);
  };
  const stopped = await h.start({ full_refresh_selection: ["cleaned"] });
  expect(armed).toBe(false);
  expect(stopped.state).toBe("CANCELED");
  await h.land("f1.json", jsonLines(3, 2));
  return { h, stopped, beforeRefresh };
}

describe("a refresh stopped part-way", () => {
  it("refuses an ordinary update with PIPELINE_REFRESH_INCOMPLETE, and a full refresh converges with every row once", async () => {
    const { h, stopped } = await stoppedRefresh();
    const refused = await h.start({}).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(RefreshIncompleteError);
    expect((refused as RefreshIncompleteError).errorCode).toBe("PIPELINE_REFRESH_INCOMPLETE");
    expect((refused as RefreshIncompleteError).httpStatus).toBe(409);
    expect((refused as Error).message).toContain(`update ${stopped.updateId}`);
    expect((refused as Error).message).toContain(`full_refresh_selection: ["cleaned"]`);
    const warnings = (await h.eventsOf("warning")).filter((e) => e.origin.update_id === stopped.updateId);
    expect(warnings.map((e) => [e.level, e.message])).toEqual([
      ["WARN", expect.stringMatching(/stopped part-way through resetting dataset cleaned/)],
    ]);
    expect((await h.pipelines.get(h.pipelineId))?.resetUnderWay).toMatchObject({
      updateId: stopped.updateId,
      datasets: ["cleaned"],
    });
    // GET pipeline says so, as it says a rewind is blocked.
    const shown = getPipelineResponse.parse(await getPipeline(h.plane, h.pipelineId));
    expect(shown.refresh_incomplete).toEqual({
      update_id: stopped.updateId,
      datasets: ["cleaned"],
      since: expect.any(String),
    });

    // A refresh of another dataset does not reset `cleaned` again: refused too.
    await expect(h.start({ full_refresh_selection: ["totals"] })).rejects.toThrow(RefreshIncompleteError);

    await h.refresh({ full_refresh_selection: ["cleaned"] });
    expect(ids(await h.rows("cleaned"))).toEqual(expect.arrayContaining([1, 2]));
    expect((await h.pipelines.get(h.pipelineId))?.resetUnderWay).toBeUndefined();
    expect(await getPipeline(h.plane, h.pipelineId)).not.toHaveProperty("refresh_incomplete");
    await h.land("f2.json", jsonLines(5, 1));
    await h.run();
    expect(ids(await h.rows("cleaned"))).toEqual([1, 2, 3, 4, 5]);
  });

  it("a rewind to a point before the stopped refresh restores tables and checkpoints together and clears it", async () => {
    // TRUNCATE keeps the table's history, so a rewind can restore what the reset removed.
    const { h, beforeRefresh } = await stoppedRefresh("TRUNCATE");
    await h.rewind({ rewind_timestamp: beforeRefresh });
    expect((await h.pipelines.get(h.pipelineId))?.resetUnderWay).toBeUndefined();
    await h.run();
    expect(ids(await h.rows("cleaned"))).toEqual([1, 2, 3, 4]);
  });

  it("after a DROP reset, a rewind cannot restore the dropped table: the mark stays until a full refresh", async () => {
    const { h, beforeRefresh, stopped } = await stoppedRefresh();
    const rewound = await h.rewind({ rewind_timestamp: beforeRefresh });
    // The dropped table's history is gone: emptied, not restored.
    expect(rewound.datasets.find((d) => d.dataset === "cleaned")?.action).toBe("TRUNCATE");
    expect((await h.pipelines.get(h.pipelineId))?.resetUnderWay?.updateId).toBe(stopped.updateId);
    await expect(h.start({})).rejects.toThrow(RefreshIncompleteError);
    await h.refresh({ full_refresh_selection: ["cleaned"] });
    await h.run();
    expect(ids(await h.rows("cleaned"))).toEqual([1, 2, 3, 4]);
  });
});
