import { describe, expect, it } from "vitest";
import { listPoints } from "../../../shared/control/rewind-points/rewind-point-views.ts";
import { stopPipeline } from "../../../shared/control/updates/stop-update.ts";
import type { UpdateTask } from "../../../shared/control/updates/update-tasks.ts";
import type { ValidatedPipeline } from "../../../shared/pipeline/validate-pipeline.ts";
import { EngineHarness, jsonLines } from "./engine-harness.ts";

/**
 * The table writes of an update besides a flow's batches — a rewind's RESTORE, a refresh's reset, a
 * materialized view's overwrite — are fenced like them: a task still at work after its update was
 * stopped or superseded (a Lambda runs on after StopExecution) lands nothing. Each task is held at
 * its start (the driver's task hook), the update is stopped or superseded, and the task released.
 */

function held(harness: EngineHarness, task: UpdateTask, nth = 1) {
  let release!: () => void;
  let reached!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  const arrived = new Promise<void>((resolve) => (reached = resolve));
  let seen = 0;
  harness.onTask = async (state) => {
    if (state !== task || ++seen !== nth) return;
    reached();
    await gate;
  };
  return { arrived, release };
}

async function pipelineOf(harness: EngineHarness, extra: Record<string, unknown>[] = [], resetMode?: string) {
  const pipeline = await harness.validate({
    name: "fenced writes",
    catalog: "main",
    schema: `fenced_writes_${harness.prefix.replace(/\W/g, "_")}`,
    configuration: { "pipelines.rewind.enabled": "true" },
    datasets: [
      {
        type: "streaming_table",
        name: "raw",
        ...(resetMode ? { reset_mode: resetMode } : {}),
        flows: [
          {
            name: "ingest",
            source: { type: "auto_loader", path: harness.landingUri, format: "json" },
            sql: "SELECT id FROM source",
          },
        ],
      },
      ...extra,
    ],
  });
  await harness.land("f1.json", jsonLines(1, 3));
  expect((await harness.run(pipeline)).state).toBe("COMPLETED");
  return pipeline;
}

async function withHarness(work: (harness: EngineHarness) => Promise<void>) {
  const harness = new EngineHarness();
  try {
    await work(harness);
  } finally {
    await harness.close();
  }
}

const ids = async (harness: EngineHarness, pipeline: ValidatedPipeline, dataset: string) =>
  (await harness.rows(pipeline, dataset)).map((r) => Number(r["id"] ?? r["n"])).sort((a, b) => a - b);

describe("fenced table writes", () => {
  it("a rewind stopped before its RESTORE commits no RESTORE", () =>
    withHarness(async (harness) => {
      const pipeline = await pipelineOf(harness);
      const [point] = (await listPoints(harness.plane, harness.pipelineId)).rewind_points;
      await harness.land("f2.json", jsonLines(4, 1));
      expect((await harness.run(pipeline)).state).toBe("COMPLETED");
      const version = await harness.tableVersion(pipeline, "raw");

      const gate = held(harness, "RewindDataset");
      const rewind = { rewind_spec: { rewind_point_id: point!.rewind_point_id } };
      const updateId = await harness.start(pipeline, rewind);
      await gate.arrived;
      await stopPipeline(harness.plane, harness.pipelineId);
      gate.release();
      expect((await harness.settled(updateId)).state).toBe("CANCELED");
      expect(await harness.tableVersion(pipeline, "raw")).toBe(version);
      expect(await ids(harness, pipeline, "raw")).toEqual([1, 2, 3, 4]);
    }));

  it("a refresh stopped before its reset truncates nothing", () =>
    withHarness(async (harness) => {
      const pipeline = await pipelineOf(harness, [], "TRUNCATE");
      const version = await harness.tableVersion(pipeline, "raw");
      const gate = held(harness, "ResetDatasets");
      const updateId = await harness.start(pipeline, { full_refresh: true });
      await gate.arrived;
      await stopPipeline(harness.plane, harness.pipelineId);
      gate.release();
      expect((await harness.settled(updateId)).state).toBe("CANCELED");
      expect(await harness.tableVersion(pipeline, "raw")).toBe(version);
      expect(await ids(harness, pipeline, "raw")).toEqual([1, 2, 3]);
    }));

  it("a superseded update's view refresh overwrites nothing", () =>
    withHarness(async (harness) => {
      const view = { type: "materialized_view", name: "total", sql: "SELECT count(*) AS n FROM raw" };
      const pipeline = await pipelineOf(harness, [view]);
      const version = await harness.tableVersion(pipeline, "total");
      await harness.land("f2.json", jsonLines(4, 1));
      // The second RunFlow is the view's (the flow's level runs first).
      const gate = held(harness, "RunFlow", 2);
      const updateId = await harness.start(pipeline);
      await gate.arrived;
      // The pipeline moves on without the held update (as after a lost execution): another holds it.
      await harness.plane.pipelines.endUpdate(harness.pipelineId, updateId, "IDLE");
      const next = await harness.plane.pipelines.beginUpdate(harness.pipelineId, "another-update");
      expect(next.outcome).toBe("begun");
      gate.release();
      const superseded = await harness.settled(updateId);
      expect(superseded.state).toBe("FAILED");
      expect(String(superseded.error)).toContain("no longer the pipeline's active update");
      expect(await harness.tableVersion(pipeline, "total")).toBe(version);
      await harness.plane.pipelines.endUpdate(harness.pipelineId, "another-update", "IDLE");
    }));
});
