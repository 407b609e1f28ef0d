import { describe, expect, it } from "vitest";
import { loadSnapshot, readHistory } from "../../../shared/delta/index.ts";
import { RewindIncompleteError } from "../../../shared/rewind/errors.ts";
import { captureRewindPoint } from "../../../shared/rewind/rewind-points.ts";
import { protectedVersions, vacuumDataset } from "../../../shared/rewind/rewind-vacuum.ts";
import { jsonLines, RewindHarness } from "../../support/rewind/rewind-harness.ts";
import { scenarioPipeline } from "./pipeline-definitions.ts";

async function threeUpdates() {
  const h = new RewindHarness();
  await h.deploy(scenarioPipeline(h.landingUri));
  const points = [];
  for (let i = 0; i < 3; i++) {
    await h.land(`f${i}.json`, jsonLines(i * 3 + 1, 3));
    await h.run();
    points.push((await captureRewindPoint(h.env(), "update-end"))!);
    h.clock.advance(60_000);
  }
  return { h, points };
}

const ids = (rows: Record<string, unknown>[]) => rows.map((r) => Number(r["id"]));

describe("executing a rewind", () => {
  it("commits RESTOREs with the update id, moves HEADs, and records progress and a final summary", async () => {
    const { h, points } = await threeUpdates();
    const target = points[0]!;
    const { updateId } = await h.rewind({ rewind_point_id: target.rewindPointId });

    const [restore] = await readHistory(h.tableStore("cleaned"), { limit: 1 });
    expect(restore!.operation).toBe("RESTORE");
    expect(restore!.operationParameters).toMatchObject({
      version: target.cut.datasets.get("cleaned")!.version,
      updateId,
    });
    expect(Object.keys(restore!.operationMetrics ?? {}).sort()).toEqual([
      "numOfFilesAfterRestore",
      "numRemovedFiles",
      "numRestoredFiles",
      "removedFilesSize",
      "restoredFilesSize",
      "tableSizeAfterRestore",
    ]);
    const heads = await Promise.all(
      ["ingest", "clean"].map((f) => h.checkpoints.head({ pipelineId: h.pipelineId, flowId: f })),
    );
    expect(heads.map((head) => head.seq)).toEqual([1, 1]);
    expect((await h.eventsOf("rewind_progress")).map((e) => e.origin.dataset_name)).toEqual([
      "raw",
      "cleaned",
      "totals",
    ]);
    const summary = (await h.eventsOf("rewind_summary")).at(-1)!;
    expect(summary.origin.update_id).toBe(updateId);
    expect((summary.details["rewind_summary"] as { dry_run: boolean }).dry_run).toBe(false);
    expect(await h.rewindBlock()).toEqual({ blocked: false });
  });

  it("plans the rewind once: each data file of the target is checked with one HEAD", async () => {
    const { h, points } = await threeUpdates();
    h.headed.length = 0;
    await h.rewind({ rewind_point_id: points[0]!.rewindPointId });
    const dataFiles = h.headed.filter((key) => key.startsWith("tables/") && !key.includes("/_delta_log/"));
    expect(dataFiles.length).toBeGreaterThan(0);
    expect(dataFiles.length).toBe(new Set(dataFiles).size);
  });

  it("a rewind that fails part-way blocks other updates; rewinding again converges without restoring twice", async () => {
    const { h, points } = await threeUpdates();
    h.faults = (key) => (key.includes("/cleaned/_delta_log/") ? new Error("S3 is down") : undefined);
    const failed = h.start({ rewind_spec: { rewind_point_id: points[0]!.rewindPointId } });
    const { updateId, state, error } = await failed;
    expect(state).toBe("FAILED");
    expect(error).toBeInstanceOf(Error);
    expect((error as Error).message).toMatch(/S3 is down/);
    expect(await h.updates.get(h.pipelineId, updateId)).toMatchObject({
      state: "FAILED",
      error: {
        errorCode: "INTERNAL_ERROR",
        message: expect.stringMatching(
          /^the rewind stopped at \S+\.cleaned: S3 is down\. .*send the rewind again/,
        ),
      },
    });
    h.faults = () => undefined;
    expect(await h.rewindBlock()).toEqual({ blocked: true, byUpdateId: updateId });
    await expect(h.run()).rejects.toThrow(RewindIncompleteError);
    const rawVersion = (await loadSnapshot(h.tableStore("raw"))).version;

    await h.rewind({ rewind_point_id: points[0]!.rewindPointId });
    expect((await loadSnapshot(h.tableStore("raw"))).version).toBe(rawVersion);
    expect((await h.eventsOf("rewind_progress")).at(-3)!.message).toMatch(/raw already holds version/);
    expect(await h.rewindBlock()).toEqual({ blocked: false });
    await h.run();
    expect(ids(await h.rows("cleaned"))).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9]);
  });

  it("rewinds again to any live point, also one on the abandoned timeline, without duplicates or gaps", async () => {
    const { h, points } = await threeUpdates();
    await h.rewind({ rewind_point_id: points[0]!.rewindPointId });
    expect(ids(await h.rows("cleaned"))).toEqual([1, 2, 3]);
    // Back to a point captured on the timeline the first rewind abandoned.
    await h.rewind({ rewind_point_id: points[2]!.rewindPointId });
    expect(ids(await h.rows("cleaned"))).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9]);
    await h.land("f3.json", jsonLines(10, 3));
    await h.run();
    expect(ids(await h.rows("cleaned"))).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]);
    // And back again, then replay: every row once.
    await h.rewind({ rewind_point_id: points[1]!.rewindPointId });
    await h.run();
    expect(ids(await h.rows("cleaned"))).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]);
    expect((await h.rows("totals", "region")).reduce((n, r) => n + Number(r["n"]), 0)).toBe(12);
  });

  it("VACUUM keeps the files every live point needs and lets them go once the points expire", async () => {
    const { h, points } = await threeUpdates();
    expect(await protectedVersions(h.env(), "totals")).toEqual(
      points.map((p) => p.cut.datasets.get("totals")!.version),
    );
    const vacuumed = await vacuumDataset(h.env(), "totals", { retentionHours: 0, allowShortRetention: true });
    expect(vacuumed.filesToDelete).toEqual([]);
    await h.rewind({ rewind_point_id: points[0]!.rewindPointId });

    h.clock.advance(8 * 86_400_000);
    expect(await protectedVersions(h.env(), "totals")).toEqual([]);
    const later = await vacuumDataset(h.env(), "totals", { retentionHours: 0, allowShortRetention: true });
    expect(later.filesToDelete.length).toBeGreaterThan(0);
  });
});
