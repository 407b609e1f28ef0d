import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ingestPipeline, startTestControlPlane, type TestControlPlane } from "../../support/control-plane.ts";

/**
 * The onset finder after a rewind (issue 33): the rewind point it offers must hold only rows from the
 * live timeline before the onset. A version numbered below the onset can lie on the timeline the
 * rewind abandoned and hold the bad rows it removed.
 */
describe("the onset finder after a rewind", () => {
  let cp: TestControlPlane;
  let pipelineId: string;
  const run = async (body?: unknown) => {
    const { update_id } = await cp.client.startUpdate(pipelineId, body);
    return cp.client.waitForUpdate(pipelineId, update_id, { intervalMs: 200 });
  };
  const rawVersions = async () =>
    (await cp.client.rewindPoints(pipelineId)).rewind_points.map(
      (point) => point.datasets.find((d) => d.identifier === "onset.lineage.raw")!.table_version,
    );

  beforeAll(async () => {
    cp = await startTestControlPlane();
    ({ pipeline_id: pipelineId } = await cp.client.createPipeline({
      ...ingestPipeline({ name: "onset lineage", catalog: "onset", schema: "lineage", path: cp.landing }),
      configuration: { "pipelines.rewind.enabled": "true" },
    }));
  });
  afterAll(async () => {
    if (pipelineId) await cp.client.deletePipeline(pipelineId, true).catch(() => undefined);
    await cp?.close();
  });

  it("offers a point on the live timeline, not one the rewind abandoned", async () => {
    // raw@1 good, raw@2 bad rows, raw@3 more rows (still holding the bad ones): a point after each.
    await cp.land("1.json", [{ id: 1 }, { id: 2 }]);
    expect((await run()).state).toBe("COMPLETED");
    const good = (await cp.client.rewindPoints(pipelineId)).rewind_points[0]!.rewind_point_id;
    await cp.land("2.json", [{ id: -1 }, { id: -2 }]);
    expect((await run()).state).toBe("COMPLETED");
    await cp.land("3.json", [{ id: 3 }]);
    expect((await run()).state).toBe("COMPLETED");
    expect(await rawVersions()).toEqual(expect.arrayContaining([1, 2, 3]));

    // Rewind raw to version 1 (RESTORE at version 4), then replay with the bug still there: the bad
    // rows come back at version 5, the first bad version of the live timeline.
    const rewind = await run({
      rewind_spec: {
        rewind_point_id: good,
        datasets: [{ identifier: "onset.lineage.raw", cascade: true, reset_checkpoints: true }],
      },
    });
    expect(rewind.state).toBe("COMPLETED");
    expect((await run()).state).toBe("COMPLETED");
    const history = (await cp.client.history("onset.lineage.raw")).history;
    expect(history.map((entry) => [entry.version, entry.operation])).toEqual(
      expect.arrayContaining([
        [4, "RESTORE"],
        [5, expect.any(String)],
      ]),
    );

    const onset = await cp.client.onset("onset.lineage.raw", { predicate: "id < 0" });
    expect(onset).toMatchObject({ found: true, starting_version: 4, first_bad_version: 5 });
    // Versions 2 and 3 are numbered below 5 but hold the bad rows the rewind removed; version 4
    // (the RESTORE) and version 1 hold only good rows.
    const offered = onset.rewind_point?.datasets.find((d) => d.identifier === "onset.lineage.raw");
    expect(offered).toBeDefined();
    expect([1, 4]).toContain(offered!.table_version);
    const rows = await cp.client.query("onset.lineage.raw", {
      version: offered!.table_version,
      sql: "SELECT count(*) AS bad FROM t WHERE id < 0",
    });
    expect(rows.rows).toEqual([{ bad: 0 }]);
  });
});
