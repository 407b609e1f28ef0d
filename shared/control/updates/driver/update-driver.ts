import type { CrashHook } from "../../../engine/crash-points.ts";
import type { FlowRunProgress } from "../../../engine/flow-runner.ts";
import type { ViewRefresh } from "../../../engine/materialized-view.ts";
import type { UpdateState } from "../../../store/updates-repository.ts";
import type { ControlPlane } from "../../plane/control-plane.ts";
import { continueAsNew, nextCycle, type CycleInput } from "../steps/continuous-step.ts";
import { failUpdate, finishUpdate } from "../steps/finish-step.ts";
import { codedMessage } from "../steps/task-errors.ts";
import { planExecution, type ExecutionPlan } from "../steps/plan-step.ts";
import { resetDatasets } from "../steps/reset-step.ts";
import { finishRewind, rewindOneDataset } from "../steps/rewind-step.ts";
import { runItem, type RunOutcome } from "../steps/run-step.ts";
import type { UpdateIds } from "../steps/update-context.ts";
import { MapFailed, runMap, runTask, Stopped } from "./driver-states.ts";
import { planeOfUpdate } from "../../branches/branch-plane.ts";
import { UPDATE_FAILED, type UpdateTask } from "../update-tasks.ts";

/**
 * The update state machine walked in process (tests, benchmarks): the same steps, in the same order,
 * as the ASL of `infra/aws/update-state-machine.ts` — PlanUpdate → Branch: rewind waves then
 * FinishRewind, or ResetDatasets (if needed) then DAG levels of RunFlow, retried while its budget
 * runs out (a continuous update's levels, with their own task names, again each trigger) — then
 * FinishUpdate; a failure takes the Catch path to FailUpdate. Tasks and Maps behave as Step
 * Functions' do (driver-states.ts).
 */

export interface DriverOptions {
  /** One RunFlow invocation's budget (Lambda: its remaining time less a margin). @default 10 min */
  readonly budgetMs?: number;
  /** Waits for a retry or a continuous trigger. @default setTimeout */
  readonly sleep?: (ms: number) => Promise<void>;
  /** Asked before each task: true once the execution was stopped (StopExecution). */
  readonly stopped?: () => boolean;
  /** Stands for `$$.StateMachine.Id` when a continuous update hands over. */
  readonly stateMachineArn?: string;
  /** Crash-injection test hook, handed to every micro-batch. */
  readonly crash?: CrashHook;
  /** A continued execution's input: the cycles the update ran before it (ASL: `$.cycle`). */
  readonly cycle?: CycleInput["cycle"];
  /** Told each task state as it is entered (a trace of the walk). */
  readonly onTask?: (state: UpdateTask) => void | Promise<void>;
}

/** How the execution ended, with what its tasks answered (for tests to look at). */
export interface DrivenUpdate {
  readonly state: UpdateState;
  readonly plan?: ExecutionPlan;
  /** The error the Catch path handled, as thrown. */
  readonly error?: unknown;
  readonly flows: Record<string, FlowRunProgress>;
  readonly views: Record<string, ViewRefresh>;
}

export async function driveUpdate(
  processPlane: ControlPlane,
  ids: UpdateIds,
  options: DriverOptions = {},
): Promise<DrivenUpdate> {
  // As each task's Lambda makes it (functions/tasks/task-handler.ts): a branch's update, its branch's.
  const plane = await planeOfUpdate(processPlane, ids);
  const sleep = options.sleep ?? ((ms) => new Promise<void>((resolve) => setTimeout(resolve, ms)));
  const flows: Record<string, FlowRunProgress> = {};
  const views: Record<string, ViewRefresh> = {};
  let plan: ExecutionPlan | undefined;
  const ended = (state: UpdateState, error?: unknown): DrivenUpdate => ({
    state,
    ...(plan ? { plan } : {}),
    ...(error === undefined ? {} : { error }),
    flows,
    views,
  });
  const task = <T>(state: UpdateTask, work: () => Promise<T>) => runTask({ ...options, sleep }, state, work);
  // A Map's Catch hands FailUpdate the item's own input (its dataset and flow), as the ASL does.
  const fail = (state: UpdateTask, error: unknown, item: object = {}) =>
    task(state, () =>
      failUpdate(
        plane,
        ids,
        error instanceof MapFailed
          ? UPDATE_FAILED
          : { Error: error instanceof Error ? error.name : "Error", Cause: caughtCause(error) },
        item,
      ),
    );
  const map = <Item>(items: readonly Item[], failState: UpdateTask, work: (item: Item) => Promise<void>) =>
    runMap(items, work, (error, item) => fail(failState, error, item as object));
  const runLevel = async (level: ExecutionPlan["levels"][number], inCycle: boolean) =>
    map(level.items, inCycle ? "FailUpdateInCycle" : "FailUpdateInRun", async (item) => {
      const outcome = await task(inCycle ? "RunFlowInCycle" : "RunFlow", () =>
        runItem(plane, item, options.budgetMs ?? 600_000, options.crash ? { crash: options.crash } : {}),
      );
      if (outcome.view) views[item.dataset] = outcome.view;
      else if (item.flow) flows[item.flow] = sumProgress(flows[item.flow], outcome);
    });

  try {
    const planned = await task("PlanUpdate", () => planExecution(plane, ids));
    plan = planned;
    if (planned.branch === "rewind") {
      for (const wave of planned.waves) {
        await map(wave.items, "FailUpdateInRewind", async (item) => {
          await task("RewindDataset", () => rewindOneDataset(plane, item));
        });
      }
      await task("FinishRewind", () => finishRewind(plane, ids));
    } else if (planned.branch === "run") {
      if (planned.resets) await task("ResetDatasets", () => resetDatasets(plane, ids));
      let cycle = options.cycle;
      for (;;) {
        for (const level of planned.levels) await runLevel(level, planned.continuous);
        if (!planned.continuous) break;
        await sleep(planned.triggerSeconds * 1000);
        const next = await task("NextCycle", () =>
          nextCycle(plane, { ...ids, ...(cycle ? { cycle } : {}), plan: { handOverAt: planned.handOverAt } }),
        );
        if (next.stopped) return ended((await plane.updates.get(ids.pipelineId, ids.updateId))!.state);
        if (next.continueAsNew) {
          const stateMachineArn = options.stateMachineArn ?? "in-process";
          await task("ContinueUpdate", () =>
            continueAsNew(plane, { ...ids, cycle: next.number, stateMachineArn }),
          );
          return ended("RUNNING");
        }
        cycle = { number: next.number };
      }
    }
    const finished = await task("FinishUpdate", () =>
      finishUpdate(
        plane,
        ids,
        planned.finish,
        planned.handOverAt === undefined
          ? undefined
          : { at: planned.handOverAt, stateMachineArn: options.stateMachineArn ?? "in-process" },
      ),
    );
    return ended(finished.state as UpdateState);
  } catch (error) {
    const original = error instanceof MapFailed ? error.cause : error;
    if (error instanceof Stopped) {
      return ended((await plane.updates.get(ids.pipelineId, ids.updateId))?.state ?? "CANCELED");
    }
    try {
      const failed = await fail("FailUpdate", error);
      return ended(failed.state as UpdateState, original);
    } catch {
      // Stopped on the Catch path, or FailUpdate failed too: the update is as stored.
      const stored = await plane.updates.get(ids.pipelineId, ids.updateId).catch(() => undefined);
      return ended(stored?.state ?? "FAILED", original);
    }
  }
}

/** What Lambda hands Step Functions as the cause: the message, with the error's code in front. */
function caughtCause(error: unknown): string {
  return error instanceof Error ? codedMessage(error) : String(error);
}

function sumProgress(before: FlowRunProgress | undefined, outcome: RunOutcome): FlowRunProgress {
  if (!before) {
    const { view: _view, ...progress } = outcome;
    return progress;
  }
  return {
    batches: before.batches + outcome.batches,
    rowsIn: before.rowsIn + outcome.rowsIn,
    rowsOut: before.rowsOut + outcome.rowsOut,
    badRecords: before.badRecords + outcome.badRecords,
    ...(outcome.lastSeq !== undefined ? { lastSeq: outcome.lastSeq } : {}),
  };
}
