import { describe, expect, it } from "vitest";
import { listPoints } from "../../../shared/control/rewind-points/rewind-point-views.ts";
import { stopPipeline } from "../../../shared/control/updates/stop-update.ts";
import type { UpdateTask } from "../../../shared/control/updates/update-tasks.ts";
import { crashOnce } from "../../../shared/engine/crash-points.ts";
import type { ValidatedPipeline } from "../../../shared/pipeline/validate-pipeline.ts";
import { PIPELINE_STATES, type PipelineState } from "../../../shared/store/pipelines-repository.ts";
import { UPDATE_STATES, type UpdateState } from "../../../shared/store/updates-repository.ts";
import { EngineHarness, jsonLines } from "./engine-harness.ts";

/**
 * Every state of an update and of a pipeline (the lists in shared/store, which docs/states.md is
 * checked against by test/unit/control/state-diagram-doc.test.ts) has a way out: the runtime is
 * driven into the state through the control-plane steps (start-update, then the driver held at a
 * task boundary), the documented way out is applied, and the pipeline then accepts a new update that
 * completes with every landed row exactly once. A state Ebb never enters itself (kept for Databricks'
 * shapes) is forced onto a held update whose execution is then lost: the next start frees it too.
 */

/** Where the driver is held so that the update shows each state Ebb enters. */
const HELD_AT: Partial<Record<UpdateState, { task: UpdateTask; request?: Record<string, unknown> }>> = {
  QUEUED: { task: "PlanUpdate" },
  // A run with resets is INITIALIZING until ResetDatasets (one without is RUNNING from PlanUpdate on).
  INITIALIZING: { task: "ResetDatasets", request: { full_refresh: true } },
  // ResetDatasets moves the update to RESETTING: the first RunFlow after it sees that.
  RESETTING: { task: "RunFlow", request: { full_refresh: true } },
  RUNNING: { task: "FinishUpdate" },
};
const TERMINAL: readonly UpdateState[] = ["COMPLETED", "FAILED", "CANCELED"];
/** The pipeline's state while its update is held in each state above. */
const PIPELINE_WHILE: Partial<Record<UpdateState, PipelineState>> = {
  QUEUED: "STARTING",
  INITIALIZING: "RUNNING",
  RESETTING: "RUNNING",
  RUNNING: "RUNNING",
};

type WayOut = "stop" | "execution lost";

/** A harness whose driver waits, the first time it enters `task`, until `release` is called. */
function held(harness: EngineHarness, task: UpdateTask) {
  let release!: () => void;
  let reached!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  const arrived = new Promise<void>((resolve) => (reached = resolve));
  let holding = true;
  harness.onTask = async (state) => {
    if (!holding || state !== task) return;
    holding = false;
    reached();
    await gate;
  };
  return { arrived, release };
}

async function ingest(harness: EngineHarness): Promise<ValidatedPipeline> {
  const pipeline = await harness.validate({
    name: "ways out",
    catalog: "main",
    schema: `ways_${harness.prefix.replace(/\W/g, "_")}`,
    configuration: { "pipelines.rewind.enabled": "true" },
    datasets: [
      {
        type: "streaming_table",
        name: "raw",
        flows: [
          {
            name: "ingest",
            source: { type: "auto_loader", path: harness.landingUri, format: "json" },
            sql: "SELECT id FROM source",
          },
        ],
      },
    ],
  });
  await harness.land("f1.json", jsonLines(1, 3));
  return pipeline;
}

/** The pipeline accepts a new update, which completes and leaves every landed row once. */
async function acceptsAnUpdate(harness: EngineHarness, pipeline: ValidatedPipeline, rows: number) {
  await harness.land(`f${rows + 1}.json`, jsonLines(rows + 1, 1));
  const next = await harness.run(pipeline);
  expect(next.state, String(next.error)).toBe("COMPLETED");
  expect((await harness.plane.pipelines.get(harness.pipelineId))?.state).toBe("IDLE");
  const ids = (await harness.rows(pipeline, "raw")).map((r) => Number(r["id"])).sort((a, b) => a - b);
  expect(ids).toEqual(Array.from({ length: rows + 1 }, (_, i) => i + 1));
}

async function stored(harness: EngineHarness, updateId: string) {
  const update = await harness.plane.updates.get(harness.pipelineId, updateId);
  const pipeline = await harness.plane.pipelines.get(harness.pipelineId);
  return { update: update!, pipeline: pipeline! };
}

/** Holds an update in `state` (forcing it, and the pipeline's `pipelineState`, when Ebb never enters them). */
async function holdIn(harness: EngineHarness, state: UpdateState, pipelineState?: PipelineState) {
  const pipeline = await ingest(harness);
  const at = HELD_AT[state] ?? { task: "PlanUpdate" as const };
  const gate = held(harness, at.task);
  const updateId = await harness.start(pipeline, at.request ?? {});
  await gate.arrived;
  if (!HELD_AT[state]) await harness.plane.updates.transition(harness.pipelineId, updateId, state);
  if (pipelineState) await harness.plane.pipelines.setState(harness.pipelineId, updateId, pipelineState);
  const now = await stored(harness, updateId);
  expect(now.update.state).toBe(state);
  expect(now.pipeline.state).toBe(pipelineState ?? PIPELINE_WHILE[state] ?? "STARTING");
  expect(now.pipeline.activeUpdateId).toBe(updateId);
  return { pipeline, updateId, release: gate.release };
}

/** Applies `way` to the held update and checks where it leaves it; answers the rows landed so far. */
async function leave(
  harness: EngineHarness,
  held: Awaited<ReturnType<typeof holdIn>>,
  way: WayOut,
): Promise<void> {
  if (way === "stop") {
    await stopPipeline(harness.plane, harness.pipelineId);
    held.release();
    expect((await harness.settled(held.updateId)).state).toBe("CANCELED");
    expect((await stored(harness, held.updateId)).update.state).toBe("CANCELED");
    expect((await stored(harness, held.updateId)).pipeline.activeUpdateId).toBeUndefined();
    return;
  }
  // The execution dies behind Ebb's back (a crashed runtime, a timed-out execution): the next start
  // finds it not running, fails the update with EXECUTION_LOST and frees the pipeline.
  await harness.stateMachine.stop(`in-process:execution:${held.updateId}`);
  await harness.land("f2.json", jsonLines(4, 1));
  const nextId = await harness.start(held.pipeline);
  held.release();
  await harness.settled(held.updateId);
  expect((await stored(harness, held.updateId)).update).toMatchObject({
    state: "FAILED",
    error: { errorCode: "EXECUTION_LOST" },
  });
  const next = await harness.settled(nextId);
  expect(next.state, String(next.error)).toBe("COMPLETED");
}

async function withHarness(work: (harness: EngineHarness) => Promise<void>, given?: EngineHarness) {
  const harness = given ?? new EngineHarness();
  try {
    await work(harness);
  } finally {
    await harness.close();
  }
}

describe("every update state has a way out", () => {
  for (const state of UPDATE_STATES.filter((s) => !TERMINAL.includes(s))) {
    const entered = HELD_AT[state] !== undefined;
    const ways: readonly WayOut[] = entered ? ["stop", "execution lost"] : ["execution lost"];
    for (const way of ways) {
      it(`${state}${entered ? "" : " (never entered by Ebb, forced)"}: ${way}`, () =>
        withHarness(async (harness) => {
          const hold = await holdIn(harness, state);
          await leave(harness, hold, way);
          await acceptsAnUpdate(harness, hold.pipeline, way === "stop" ? 3 : 4);
        }));
    }
  }

  it("COMPLETED: the next update starts", () =>
    withHarness(async (harness) => {
      const pipeline = await ingest(harness);
      expect((await harness.run(pipeline)).state).toBe("COMPLETED");
      await acceptsAnUpdate(harness, pipeline, 3);
    }));

  it("FAILED (and the pipeline FAILED): the next update starts and resumes the batch", () =>
    withHarness(
      async (harness) => {
        const pipeline = await ingest(harness);
        const failed = await harness.run(pipeline);
        expect(failed.state).toBe("FAILED");
        expect((await stored(harness, failed.updateId)).pipeline).toMatchObject({ state: "FAILED" });
        await acceptsAnUpdate(harness, pipeline, 3);
      },
      new EngineHarness({ crash: crashOnce("after-table-commit") }),
    ));

  it("CANCELED: the next update starts (the stop ways out above end there)", () =>
    withHarness(async (harness) => {
      const hold = await holdIn(harness, "RUNNING");
      await leave(harness, hold, "stop");
      expect((await stored(harness, hold.updateId)).update.state).toBe("CANCELED");
      await acceptsAnUpdate(harness, hold.pipeline, 3);
    }));

  it("covers every state of the list", () => {
    const covered = new Set<UpdateState>([...Object.keys(HELD_AT), ...TERMINAL] as UpdateState[]);
    for (const state of UPDATE_STATES) if (!HELD_AT[state]) covered.add(state);
    expect([...covered].sort()).toEqual([...UPDATE_STATES].sort());
  });
});

describe("every pipeline state has a way out", () => {
  /** Pipeline states the update scenarios above reach, and those forced here (never entered). */
  const reached = new Set<PipelineState>(["IDLE", "FAILED", ...Object.values(PIPELINE_WHILE)]);
  const forced = PIPELINE_STATES.filter((s) => !reached.has(s) && s !== "DELETED");

  for (const state of forced) {
    it(`${state} (never entered by Ebb, forced): execution lost`, () =>
      withHarness(async (harness) => {
        const hold = await holdIn(harness, "QUEUED", state);
        await leave(harness, hold, "execution lost");
        await acceptsAnUpdate(harness, hold.pipeline, 4);
      }));
  }

  it("DELETED (never stored: a deleted pipeline is gone): a new pipeline claims its tables and runs", async () => {
    const first = new EngineHarness();
    const pipeline = await ingest(first);
    expect((await first.run(pipeline)).state).toBe("COMPLETED");
    await first.close();
    expect(await first.plane.pipelines.get(first.pipelineId)).toBeUndefined();
    await withHarness(async (second) => {
      const again = await second.run(pipeline);
      expect(again.state, String(again.error)).toBe("COMPLETED");
      expect((await second.rows(pipeline, "raw")).map((r) => Number(r["id"])).sort()).toEqual([1, 2, 3]);
    });
  });

  it("a rewind-blocked pipeline (a rewind stopped part-way): a rewind that succeeds frees it", () =>
    withHarness(async (harness) => {
      const pipeline = await ingest(harness);
      expect((await harness.run(pipeline)).state).toBe("COMPLETED");
      const [point] = (await listPoints(harness.plane, harness.pipelineId)).rewind_points;
      const rewind = { rewind_spec: { rewind_point_id: point!.rewind_point_id } };
      const gate = held(harness, "RewindDataset");
      const updateId = await harness.start(pipeline, rewind);
      await gate.arrived;
      expect((await stored(harness, updateId)).update.state).toBe("RESETTING");
      await stopPipeline(harness.plane, harness.pipelineId);
      gate.release();
      await harness.settled(updateId);
      expect((await stored(harness, updateId)).pipeline.rewindBlocked).toBe(true);
      await expect(harness.start(pipeline)).rejects.toMatchObject({
        errorCode: "PIPELINE_REWIND_INCOMPLETE",
      });
      const again = await harness.settled(await harness.start(pipeline, rewind));
      expect(again.state, String(again.error)).toBe("COMPLETED");
      expect((await harness.plane.pipelines.get(harness.pipelineId))?.rewindBlocked).toBe(false);
      await acceptsAnUpdate(harness, pipeline, 3);
    }));

  it("covers every state of the list", () => {
    expect([...reached, ...forced, "DELETED"].sort()).toEqual([...PIPELINE_STATES].sort());
  });
});
