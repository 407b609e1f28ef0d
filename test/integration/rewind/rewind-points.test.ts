import { describe, expect, it } from "vitest";
import { loadSnapshot } from "../../../shared/delta/index.ts";
import { listPoints } from "../../../shared/control/rewind-points/rewind-point-views.ts";
import { RewindBeforeFullRefreshError, RewindPointNotFoundError } from "../../../shared/rewind/errors.ts";
import { PERIODIC_MESSAGE } from "../../../shared/rewind/rewind-point.ts";
import {
  captureRewindPoint,
  findRewindPoint,
  listRewindPoints,
} from "../../../shared/rewind/rewind-points.ts";
import { jsonLines, RewindHarness } from "../../support/rewind/rewind-harness.ts";
import { scenarioPipeline } from "./pipeline-definitions.ts";

const DAY = 86_400_000;

async function twoUpdates(configuration: Record<string, string> = {}) {
  const h = new RewindHarness();
  await h.deploy(scenarioPipeline(h.landingUri, undefined, configuration));
  expect(await captureRewindPoint(h.env())).toBeUndefined(); // nothing to rewind to before a first update
  await h.land("a.json", jsonLines(1, 3));
  await h.run();
  const versionsAtFirst = await currentVersions(h);
  const first = (await captureRewindPoint(h.env()))!;
  h.clock.advance(3_600_000);
  await h.land("b.json", jsonLines(4, 3));
  await h.run();
  const second = (await captureRewindPoint(h.env(), "update-end", "U2"))!;
  return { h, first, second, versionsAtFirst };
}

async function currentVersions(h: RewindHarness): Promise<number[]> {
  const out: number[] = [];
  for (const dataset of ["raw", "cleaned", "totals"])
    out.push((await loadSnapshot(h.tableStore(dataset))).version);
  return out;
}

// Each successful update also captures a point at its end: two updates leave four points.
const ids = (points: readonly { rewindPointId: string }[]) => points.map((p) => p.rewindPointId);

describe("rewind points", () => {
  it("are rewind_summary events holding every dataset's version and every flow's seq", async () => {
    const { h, first, versionsAtFirst: versions } = await twoUpdates();
    const event = (await h.eventsOf("rewind_summary")).find((e) => e.id === first.rewindPointId);
    expect(event!.message).toBe(PERIODIC_MESSAGE);
    expect(event!.details).toEqual({
      rewind_summary: {
        dry_run: true,
        timestamp: new Date(first.time).toISOString(),
        datasets: [
          { identifier: "main.shop.raw", table_version: versions[0], table_id: expect.any(String) },
          { identifier: "main.shop.cleaned", table_version: versions[1], table_id: expect.any(String) },
          { identifier: "main.shop.totals", table_version: versions[2], table_id: expect.any(String) },
        ],
        flows: [
          { flow: "ingest", seq: 1 },
          { flow: "clean", seq: 1 },
        ],
      },
    });
  });

  it("list newest first with the versions each restores", async () => {
    const { h, first, second } = await twoUpdates();
    const points = await listRewindPoints(h.env());
    expect(points).toHaveLength(4);
    expect(ids(points).filter((id) => id === first.rewindPointId || id === second.rewindPointId)).toEqual([
      second.rewindPointId,
      first.rewindPointId,
    ]);
    expect(points[0]!.rewindPointId).toBe(second.rewindPointId);
    const [raw, cleaned, totals] = await currentVersions(h);
    expect(Object.fromEntries([...points[0]!.cut.datasets].map(([d, at]) => [d, at.version]))).toEqual({
      raw,
      cleaned,
      totals,
    });
    expect(Object.fromEntries(points[0]!.cut.flows)).toEqual({ ingest: 2, clean: 2 });
  });

  it("expire after 7 days by default: gone from the list and from rewinds", async () => {
    const { h, first } = await twoUpdates();
    h.clock.advance(7 * DAY - 7_200_000);
    expect(await listRewindPoints(h.env())).toHaveLength(4);
    h.clock.advance(5_400_000);
    expect(ids(await listRewindPoints(h.env()))).not.toContain(first.rewindPointId);
    expect(await listRewindPoints(h.env())).toHaveLength(2);
    await expect(findRewindPoint(h.env(), first.rewindPointId)).rejects.toThrow(RewindPointNotFoundError);
  });

  it("keep the retention the pipeline configures, also for points captured before it was shortened", async () => {
    const { h } = await twoUpdates({ "pipelines.rewind.retentionDuration": "interval 2 days" });
    h.clock.advance(2 * DAY + 1000);
    expect(await listRewindPoints(h.env())).toEqual([]);

    const long = await twoUpdates();
    expect(await listRewindPoints(long.h.env())).toHaveLength(4);
    await long.h.deploy(
      scenarioPipeline(long.h.landingUri, undefined, {
        "pipelines.rewind.retentionDuration": "interval 12 hours",
      }),
    );
    long.h.clock.advance(DAY);
    expect(await listRewindPoints(long.h.env())).toEqual([]);
  });

  it("are consistent while an update runs: a batch committed to its table but not yet to its checkpoint is left out", async () => {
    const { h } = await twoUpdates();
    // The engine's step 4 done, step 5 not: plan checkpoint 3 of `ingest`, commit its rows with the
    // txn, and leave the checkpoint PLANNED.
    const { DeltaTable } = await import("../../../shared/delta/index.ts");
    const head = await h.checkpoints.head({ pipelineId: h.pipelineId, flowId: "ingest" });
    const planned = await h.checkpoints.plan(
      { pipelineId: h.pipelineId, flowId: "ingest" },
      { parent: head.seq, offsets: head.checkpoint!.offsets },
    );
    expect(planned.outcome).toBe("planned");
    const table = await DeltaTable.open(h.tableStore("raw"));
    await table.append(
      { rows: [{ id: 99n, amount: 990n, region: "eu" }] },
      {
        txn: { appId: `${h.pipelineId}/ingest`, version: 3 },
      },
    );
    await table.close();

    const point = (await captureRewindPoint(h.env()))!;
    expect(point.cut.datasets.get("raw")!.version).toBe(
      (await loadSnapshot(h.tableStore("raw"))).version - 1,
    );
    expect(point.cut.flows.get("ingest")).toBe(2);
  });

  it("lists a point before a full refresh as not restorable, for the reason the rewind to it is refused", async () => {
    const { h, first, second } = await twoUpdates();
    h.clock.advance(60_000);
    await h.refresh({ full_refresh_selection: ["totals"] });
    const third = (await captureRewindPoint(h.env()))!;
    const listed = new Map(
      (await listPoints(h.plane, h.pipelineId)).rewind_points.map((p) => [p.rewind_point_id, p]),
    );
    const refusal = (await h
      .rewind({ rewind_point_id: first.rewindPointId, dry_run: true })
      .catch((error: unknown) => error)) as RewindBeforeFullRefreshError;
    expect(refusal).toBeInstanceOf(RewindBeforeFullRefreshError);
    for (const before of [first, second]) {
      expect(listed.get(before.rewindPointId)).toMatchObject({
        restorable: false,
        not_restorable_reason: expect.stringMatching(
          /^REWIND_BEFORE_FULL_REFRESH: the rewind target .* is before the last full refresh of main\.shop\.totals/,
        ),
      });
    }
    expect(listed.get(first.rewindPointId)!.not_restorable_reason).toBe(
      `REWIND_BEFORE_FULL_REFRESH: ${refusal.message}`,
    );
    expect(listed.get(third.rewindPointId)!.restorable).toBe(true);
    await h.rewind({ rewind_point_id: third.rewindPointId, dry_run: true });
  });
});
