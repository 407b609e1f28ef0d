import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EXIT, runCli } from "../../../shared/cli/main.ts";
import { DeltaTable } from "../../../shared/delta/index.ts";
import { testObjectStore } from "../../support/aws.ts";
import { startTestControlPlane, type TestControlPlane } from "../../support/control-plane.ts";

/**
 * VACUUM of a pipeline's table by its name, through the API and the CLI: with no retention at all it
 * deletes what no live rewind point needs (a data file no commit took, as a crashed batch leaves) and
 * keeps what one does, so the rewind to the oldest point still restores its rows afterwards.
 */
describe("VACUUM by table name", () => {
  let cp: TestControlPlane;
  let pipelineId: string;
  const run = async (body?: unknown) => {
    const { update_id } = await cp.client.startUpdate(pipelineId, body);
    return cp.client.waitForUpdate(pipelineId, update_id, { intervalMs: 200 });
  };
  const total = async () => (await cp.client.query("vac.points.totals")).rows[0]?.["n"];

  /** A rewind-enabled pipeline of `vac.<schema>`: the landing folder's ids, and a view counting them. */
  const countingPipeline = (schema: string, view: string) => ({
    name: `vacuum ${schema}`,
    catalog: "vac",
    schema,
    configuration: { "pipelines.rewind.enabled": "true" },
    definition: {
      datasets: [
        {
          type: "streaming_table",
          name: "raw",
          flows: [
            {
              name: "ingest",
              source: { type: "auto_loader", path: cp.landing, format: "json", schema: { id: "BIGINT" } },
              sql: "SELECT id FROM source",
            },
          ],
        },
        { type: "materialized_view", name: view, sql: "SELECT count(*) AS n FROM raw" },
      ],
    },
  });

  beforeAll(async () => {
    cp = await startTestControlPlane();
    ({ pipeline_id: pipelineId } = await cp.client.createPipeline(countingPipeline("points", "totals")));
  });
  afterAll(async () => {
    if (pipelineId) await cp.client.deletePipeline(pipelineId).catch(() => undefined);
    await cp?.close();
  });

  it("keeps the files of live rewind points, through the API and the CLI", async () => {
    await cp.land("1.json", [{ id: 1 }, { id: 2 }]);
    expect((await run()).state).toBe("COMPLETED");
    const point = await cp.client.captureRewindPoint(pipelineId);
    const pointVersion = point.datasets.find((d) => d.identifier === "vac.points.totals")!.table_version;
    // Two more refreshes of the view: the point's files are no longer in the latest version.
    for (const file of ["2.json", "3.json"]) {
      await cp.land(file, [{ id: Number(file[0]) * 10 }]);
      expect((await run()).state).toBe("COMPLETED");
    }
    expect(await total()).toBe(4);

    const { rewind_points: points } = await cp.client.rewindPoints(pipelineId);
    const live = [
      ...new Set(
        points.flatMap((p) =>
          p.datasets.filter((d) => d.identifier === "vac.points.totals").map((d) => d.table_version),
        ),
      ),
    ].sort((a, b) => a - b);
    expect(live).toContain(pointVersion);
    const orphan = "part-00000-orphan.c000.snappy.parquet";
    await testObjectStore("tables/vac/points/totals/").put(orphan, new Uint8Array([1, 2, 3]));

    const dryRun = await cp.client.vacuum("vac.points.totals", {
      retain_hours: 0,
      allow_short_retention: true,
      dry_run: true,
    });
    expect(dryRun).toMatchObject({ pipeline_id: pipelineId, dry_run: true, protected_versions: live });
    // The view's earlier refreshes' files are all kept for the points; only the orphan goes.
    expect(dryRun.files_protected).toBeGreaterThan(0);
    expect(dryRun.files.map((file) => file.path)).toEqual([orphan]);

    let out = "";
    const code = await runCli(
      [
        "table",
        "vacuum",
        "vac.points.totals",
        "--retain-hours",
        "0",
        "--allow-short-retention",
        "--json",
        "--endpoint",
        cp.plane.endpoint,
        "--token",
        cp.plane.token,
      ],
      { out: (text) => (out += text), err: () => undefined },
    );
    expect(code).toBe(EXIT.ok);
    const deleted = out
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as { path: string; status: string });
    expect(deleted.map((file) => file.path).sort()).toEqual(dryRun.files.map((file) => file.path).sort());
    expect(deleted.every((file) => file.status === "deleted")).toBe(true);
    // Nothing left to delete, and the point is still kept.
    const again = await cp.client.vacuum("vac.points.totals", {
      retain_hours: 0,
      allow_short_retention: true,
    });
    expect(again.files).toEqual([]);
    expect(again.protected_versions).toEqual(live);

    const rewound = await run({
      rewind_spec: {
        rewind_point_id: point.rewind_point_id,
        datasets: [{ identifier: "vac.points.raw", cascade: true, reset_checkpoints: true }],
      },
    });
    expect(rewound.state, rewound.error?.message).toBe("COMPLETED");
    expect(await total()).toBe(2);
  });

  it("refuses a short retention unless asked, and names an unknown table", async () => {
    await expect(cp.client.vacuum("vac.points.totals", { retain_hours: 0 })).rejects.toMatchObject({
      status: 400,
    });
    await expect(cp.client.vacuum("vac.points.nothing")).rejects.toMatchObject({
      errorCode: "RESOURCE_DOES_NOT_EXIST",
    });
    await expect(cp.client.vacuum("vac.points.totals", { retain: 1 } as never)).rejects.toMatchObject({
      errorCode: "INVALID_PARAMETER_VALUE",
    });
  });

  it("says that a table no pipeline owns had nothing but the retention protecting its files", async () => {
    const loose = await DeltaTable.create(testObjectStore("tables/vac/loose/t/"), {
      schema: { type: "struct", fields: [{ name: "id", type: "long", nullable: true, metadata: {} }] },
    });
    await loose.close();
    const result = await cp.client.vacuum("vac.loose.t", { dry_run: true });
    expect(result.pipeline_id).toBeUndefined();
    expect(result.protected_versions).toEqual([]);
    expect(result.notice).toBe(
      "no pipeline owns vac.loose.t, so it has no rewind points to protect: only the retention kept files",
    );
    const owned = await cp.client.vacuum("vac.points.totals", { dry_run: true });
    expect(owned.notice).toBeUndefined();
  });

  it("marks a point whose files a VACUUM outside Ebb deleted restorable: false, with the reason", async () => {
    const { pipeline_id: other } = await cp.client.createPipeline(countingPipeline("outside", "ones"));
    try {
      for (let i = 0; i < 2; i++) {
        await cp.land(`outside-${i}.json`, [{ id: 100 + i }]);
        const { update_id } = await cp.client.startUpdate(other);
        expect((await cp.client.waitForUpdate(other, update_id, { intervalMs: 200 })).state).toBe(
          "COMPLETED",
        );
      }
      // As delta-rs or Spark would: no rewind points known, no retention.
      const table = await DeltaTable.open(testObjectStore("tables/vac/outside/ones/"));
      try {
        await table.vacuum({ retentionHours: 0, allowShortRetention: true });
      } finally {
        await table.close();
      }
      const { rewind_points: points } = await cp.client.rewindPoints(other);
      const version = (point: (typeof points)[number]) =>
        point.datasets.find((d) => d.identifier === "vac.outside.ones")!.table_version;
      const latest = Math.max(...points.map(version));
      for (const point of points) {
        if (version(point) === latest) expect(point.restorable).toBe(true);
        else {
          expect(point.restorable).toBe(false);
          expect(point.not_restorable_reason).toMatch(/^vac\.outside\.ones: data file .* is gone/);
        }
      }
      expect(points.some((point) => point.restorable === false)).toBe(true);
    } finally {
      await cp.client.deletePipeline(other).catch(() => undefined);
    }
  });
});
