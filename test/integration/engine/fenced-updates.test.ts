import { describe, expect, it } from "vitest";
import { stopPipeline } from "../../../shared/control/updates/stop-update.ts";
import type { CrashPoint } from "../../../shared/engine/crash-points.ts";
import type { ValidatedPipeline } from "../../../shared/pipeline/validate-pipeline.ts";
import { EngineHarness, jsonLines } from "./engine-harness.ts";

/**
 * Only the pipeline's active update lands anything: a batch in flight when its update is stopped,
 * or superseded by the next update after its execution was lost, commits neither its table nor its
 * checkpoint, and the next update lands every row exactly once.
 */

const FILES = 5;
const ROWS = 3;

/** A harness whose `during` runs once, at `point` of the second batch, inside the micro-batch. */
function harnessPausing(point: CrashPoint) {
  const pause: { during?: () => Promise<void> } = {};
  let reached = 0;
  const harness = new EngineHarness({
    crash: async (at) => {
      if (at !== point || ++reached !== 2 || !pause.during) return;
      const during = pause.during;
      delete pause.during;
      await during();
    },
  });
  return { harness, pause };
}

async function ingestPipeline(harness: EngineHarness): Promise<ValidatedPipeline> {
  const pipeline = await harness.validate({
    name: "fenced",
    catalog: "main",
    schema: `fenced_${harness.prefix.replace(/\W/g, "_")}`,
    datasets: [
      {
        type: "streaming_table",
        name: "raw",
        flows: [
          {
            name: "ingest",
            source: { type: "auto_loader", path: harness.landingUri, format: "json" },
            sql: "SELECT * FROM source",
            options: { max_files_per_batch: 1 },
          },
        ],
      },
    ],
  });
  for (let file = 0; file < FILES; file++)
    await harness.land(`f${file}.json`, jsonLines(file * ROWS + 1, ROWS));
  return pipeline;
}

async function expectEveryRowOnce(harness: EngineHarness, pipeline: ValidatedPipeline) {
  const ids = (await harness.rows(pipeline, "raw")).map((r) => Number(r["id"])).sort((a, b) => a - b);
  expect(ids).toEqual(Array.from({ length: FILES * ROWS }, (_, i) => i + 1));
}

const flow = (harness: EngineHarness) => ({ pipelineId: harness.pipelineId, flowId: "ingest" });

describe("fenced updates", () => {
  it("a stopped update commits no table after the stop is acknowledged", async () => {
    const { harness, pause } = harnessPausing("after-data-files");
    try {
      const pipeline = await ingestPipeline(harness);
      let versionAtStop = Number.NaN;
      pause.during = async () => {
        await stopPipeline(harness.plane, harness.pipelineId);
        versionAtStop = await harness.tableVersion(pipeline, "raw");
      };
      const stopped = await harness.run(pipeline);
      expect(stopped.state, String(stopped.error)).toBe("CANCELED");
      expect(await harness.tableVersion(pipeline, "raw")).toBe(versionAtStop);
      expect((await harness.plane.checkpoints.get(flow(harness), 2))?.status).toBe("PLANNED");
      expect((await harness.plane.checkpoints.head(flow(harness))).seq).toBe(1);

      const next = await harness.run(pipeline);
      expect(next.state, String(next.error)).toBe("COMPLETED");
      await expectEveryRowOnce(harness, pipeline);
    } finally {
      await harness.close();
    }
  });

  it("a stop after the table commit moves no HEAD; the next update finishes the batch, not again", async () => {
    const { harness, pause } = harnessPausing("before-head-move");
    try {
      const pipeline = await ingestPipeline(harness);
      pause.during = async () => {
        await stopPipeline(harness.plane, harness.pipelineId);
      };
      expect((await harness.run(pipeline)).state).toBe("CANCELED");
      expect((await harness.plane.checkpoints.get(flow(harness), 2))?.status).toBe("PLANNED");
      expect((await harness.plane.checkpoints.head(flow(harness))).seq).toBe(1);

      const next = await harness.run(pipeline);
      expect(next.state, String(next.error)).toBe("COMPLETED");
      expect((await harness.plane.checkpoints.get(flow(harness), 2))?.status).toBe("COMMITTED");
      await expectEveryRowOnce(harness, pipeline);
    } finally {
      await harness.close();
    }
  });

  it("a superseded update's late batch lands nothing in the table the next update refreshed", async () => {
    const { harness, pause } = harnessPausing("after-data-files");
    try {
      const pipeline = await ingestPipeline(harness);
      let next: { updateId: string; state: string } | undefined;
      pause.during = async () => {
        // The first update's execution is lost (behind Ebb's back) while its batch is in flight; the
        // next update refreshes the table from the start.
        const [lost] = (await harness.plane.updates.list(harness.pipelineId, { limit: 1 })).items;
        await harness.stateMachine.stop(`in-process:execution:${lost!.updateId}`);
        const updateId = await harness.start(pipeline, { full_refresh: true });
        next = { updateId, state: (await harness.settled(updateId)).state };
      };
      const superseded = await harness.run(pipeline);
      expect(superseded.state).toBe("FAILED");
      expect(next?.state).toBe("COMPLETED");
      const stored = await harness.plane.updates.get(harness.pipelineId, superseded.updateId);
      expect(stored?.error?.errorCode).toBe("EXECUTION_LOST");
      await expectEveryRowOnce(harness, pipeline);
      // Nothing is left to do: the late batch did not move the flow either.
      const after = await harness.run(pipeline);
      expect(after.flows["ingest"]?.batches ?? 0).toBe(0);
      await expectEveryRowOnce(harness, pipeline);
    } finally {
      await harness.close();
    }
  });
});
