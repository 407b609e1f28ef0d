import type { BatchEngine } from "../../../pipeline/pipeline-settings.ts";
import { checkQueriesBind } from "../../../engine/query-binding.ts";
import { planRefresh } from "../../../rewind/refresh-plan.ts";
import { recordRewindPoint } from "../../../rewind/rewind-points.ts";
import { isTerminal } from "../../../store/updates-repository.ts";
import type { ControlPlane } from "../../plane/control-plane.ts";
import { plannedDatasetView } from "../planned-dataset-view.ts";
import { readRewindPlan } from "../rewind-plan-record.ts";
import { publishOnce } from "../../plane/lifecycle-events.ts";
import { rewindPlanned } from "../lifecycle-event-builders.ts";
import { intentOf } from "../update-intent.ts";
import { planPublishWaves } from "./publish-execution.ts";
import { triggerSeconds } from "./continuous-step.ts";
import { HANDOVER_AFTER_MS } from "./execution-handover.ts";
import { finishFactsOf, type FinishFacts } from "../finish-facts.ts";
import { transitionTogether } from "./step-writes.ts";
import { openUpdate, type UpdateContext, type UpdateIds } from "./update-context.ts";

/**
 * The state machine's first step (architecture.md "The shape": Plan → Choice):
 *
 * 1. An update stopped before it began ends here (`done`). The update moves to INITIALIZING, or to
 *    RUNNING when it is a run that goes straight to its levels (no resets first).
 * 2. A rewind reads the plan start-update made (every check ran there, and no other update has
 *    written since: the pipeline is this update's). A dry run is completed right here: its summary
 *    event is the whole result, and "Rewind Planned" tells readers outside (docs/events.md). A real one marks the pipeline rewind-blocked first (write-ahead),
 *    then answers the datasets to rewind in waves: a wave holds datasets of one DAG level, so each
 *    runs after all its upstreams.
 * 2b. A publish of a branch (publish-execution.ts) takes the rewind's path: the
 *    pipeline rewind-blocked, its tables in waves, from the plan the publish request recorded.
 * 3. A run plans its refresh from the recorded intent (pure): whether resets come first, and the
 *    datasets to run, level by level, as one item per streaming flow and one per materialized view.
 *    A validate_only run binds every query over its inputs' schemas instead (query-binding.ts), and
 *    ends here.
 * A run that goes straight to its levels moves the update to RUNNING here, and its items say so with
 * the definition version they run: RunFlow then needs no read of the update (a stop is seen by the
 * execution's stop, the commit fence and the step's own polling). Other items carry ids only, and
 * their steps re-read the update and its intent.
 */

export interface DatasetItem extends UpdateIds {
  readonly dataset: string;
}

export interface RunItem extends UpdateIds {
  readonly dataset: string;
  /** The streaming flow to run; absent for a materialized view. */
  readonly flow?: string;
  /** Present once the plan moved the update to RUNNING: the definition version the update runs. */
  readonly definitionVersion?: number;
  /** The execution's hand-over time (execution-handover.ts): the flow's budget ends there. */
  readonly handOverAt?: number;
  /** The update's own engine for every batch (start-update's `engine`), over `pipelines.engine`. */
  readonly engine?: BatchEngine;
}

export interface ExecutionPlan {
  readonly branch: "rewind" | "run" | "done";
  /** A continuous pipeline's run: after the levels, wait `triggerSeconds` and run them again. */
  readonly continuous: boolean;
  readonly triggerSeconds: number;
  readonly waves: readonly { readonly items: readonly DatasetItem[] }[];
  readonly resets: boolean;
  readonly levels: readonly { readonly items: readonly RunItem[] }[];
  /** Present when the update is RUNNING from this plan on (see `FinishFacts`). */
  readonly finish?: FinishFacts;
  /** A run's hand-over time (execution-handover.ts). */
  readonly handOverAt?: number;
}

export async function planExecution(
  plane: ControlPlane,
  ids: UpdateIds,
  handoverAfter = HANDOVER_AFTER_MS,
): Promise<ExecutionPlan> {
  const context = await openUpdate(plane, ids);
  const plan = await planWith(plane, ids, context, plane.clock() + handoverAfter);
  // The step's events are written (in one batch, most often) before the machine moves on.
  await context.events.flush();
  return plan;
}

async function planWith(
  plane: ControlPlane,
  ids: UpdateIds,
  context: UpdateContext,
  handOverAt: number,
): Promise<ExecutionPlan> {
  const done: ExecutionPlan = {
    branch: "done",
    continuous: false,
    triggerSeconds: 0,
    waves: [],
    resets: false,
    levels: [],
  };
  const { update, pipeline } = context;
  if (isTerminal(update.state)) return done;
  const intent = intentOf(update);
  const levelOf = new Map(
    pipeline.graph.levels.flatMap((names, level) => names.map((name) => [name, level])),
  );
  if (intent.kind === "publish")
    return { ...done, branch: "rewind", waves: await planPublishWaves(plane, ids, context) };
  if (intent.kind === "rewind") {
    await plane.updates.transition(ids.pipelineId, ids.updateId, "INITIALIZING");
    await plane.pipelines.setState(ids.pipelineId, ids.updateId, "RUNNING");
    await context.events.updateProgress("INITIALIZING");
    const plan = await readRewindPlan(plane.bucket, ids);
    await context.events.planningInformation({
      rewind: true,
      dry_run: plan.dryRun,
      // Views store nothing and compute from the rewound tables.
      datasets: plan.datasets.map((d) => ({
        ...plannedDatasetView(d),
        flows: d.flows.map((f) => ({ flow: f.flow, seq: f.targetSeq })),
      })),
      views: plan.views,
      state_definition_drift: plan.stateDrift.map((d) => ({
        flow: d.flow,
        checkpoint_seq: d.checkpointSeq,
        state: d.state,
      })),
    });
    for (const drift of plan.stateDrift) {
      await context.events.warning(
        drift.message,
        {
          state_definition_drift: {
            flow: drift.flow,
            checkpoint_seq: drift.checkpointSeq,
            state: drift.state,
          },
        },
        { flow_name: drift.flow, flow_id: drift.flow },
      );
    }
    if (plan.dryRun) {
      await recordRewindPoint(context.env, plan.cut, "dry-run", ids.updateId);
      const origin = { ...ids, pipelineName: pipeline.definition.name, time: plane.clock() };
      await publishOnce(plane, rewindPlanned(origin, plan));
      return done;
    }
    await plane.updates.transition(ids.pipelineId, ids.updateId, "RESETTING");
    await plane.pipelines.setRewindBlock(ids.pipelineId, { blocked: true, byUpdateId: ids.updateId });
    const waves: DatasetItem[][] = [];
    for (const dataset of plan.datasets) {
      (waves[levelOf.get(dataset.dataset) ?? 0] ??= []).push({ ...ids, dataset: dataset.dataset });
    }
    return { ...done, branch: "rewind", waves: waves.filter(Boolean).map((items) => ({ items })) };
  }

  const plan = planRefresh(pipeline, intent.refresh);
  // An update already RUNNING is continued by a new execution (a continuous update handed over):
  // its resets ran in its first execution, and running them again would drop what it wrote since.
  const continued = update.state === "RUNNING";
  const resets =
    !continued && (plan.resets.length > 0 || plan.checkpointResets.length > 0 || plan.warnings.length > 0);
  // A run going straight to its levels is RUNNING from here on; its events and both state changes
  // go out in one request.
  const straightToLevels = !intent.validateOnly && !resets;
  // validate_only binds each query over its inputs' schemas (query-binding.ts): one that does not
  // bind fails the update; those whose inputs are not known yet are listed in the plan's event.
  const unbound = intent.validateOnly
    ? { queries_not_bound: await checkQueriesBind(pipeline, plane.bucket, plane.locate) }
    : {};
  if (!continued && !(await announcePlan(plane, context, ids, plan, straightToLevels, unbound))) return done;
  if (intent.validateOnly) return done;
  const item = {
    ...ids,
    ...(straightToLevels ? { definitionVersion: update.definitionVersion } : {}),
    handOverAt,
    ...(intent.engine ? { engine: intent.engine } : {}),
  };
  const runFlows = plan.runFlows ? new Set(plan.runFlows) : undefined;
  // A DAG level is one wave, or several when AUTO CDC flows share a target: those run one wave
  // each, since each batch applies its events against the others' committed state.
  const levels: RunItem[][][] = [];
  for (const name of plan.run) {
    const dataset = pipeline.definition.datasets.find((d) => d.name === name);
    const waves = (levels[levelOf.get(name) ?? 0] ??= []);
    if (dataset?.type === "streaming_table") {
      const flows = dataset.flows.filter((f) => !runFlows || runFlows.has(f.name));
      for (const [i, f] of flows.entries()) {
        (waves[f.auto_cdc ? i : 0] ??= []).push({ ...item, dataset: name, flow: f.name });
      }
    } else if (dataset?.type === "materialized_view") (waves[0] ??= []).push({ ...item, dataset: name });
  }
  return {
    branch: "run",
    continuous: intent.continuous,
    triggerSeconds: triggerSeconds(pipeline),
    waves: [],
    resets,
    ...(straightToLevels ? { finish: finishFactsOf(update) } : {}),
    handOverAt,
    levels: levels
      .flatMap((waves) => waves ?? [])
      .filter((items) => items && items.length > 0)
      .map((items) => ({ items })),
  };
}

/**
 * Moves a run's update to INITIALIZING, or to RUNNING when it goes straight to its levels, with its
 * planning events; false when the update was stopped meanwhile.
 */
async function announcePlan(
  plane: ControlPlane,
  context: UpdateContext,
  ids: UpdateIds,
  plan: ReturnType<typeof planRefresh>,
  straightToLevels: boolean,
  /** More of the plan to tell (a validation's queries not bound). */
  details: Readonly<Record<string, unknown>>,
): Promise<boolean> {
  const state = straightToLevels ? "RUNNING" : "INITIALIZING";
  context.events.hold();
  await context.events.updateProgress("INITIALIZING");
  await context.events.planningInformation({
    refresh: plan.mode,
    resets: plan.resets.map((r) => ({ dataset: r.dataset, how: r.reset.how })),
    checkpoint_resets: plan.checkpointResets.map((r) => r.flow),
    run: plan.run,
    levels: context.pipeline.graph.levels,
    ...details,
  });
  if (straightToLevels) await context.events.updateProgress("RUNNING");
  const events = context.events.takeHeld();
  const running = plane.pipelines.setStateWrite(ids.pipelineId, ids.updateId, "RUNNING");
  if (await transitionTogether(plane, ids, state, [running], events)) return true;
  // One by one: an update stopped meanwhile ends here.
  const moved = await plane.updates.transition(ids.pipelineId, ids.updateId, state);
  if (moved.outcome === "already-final") return false;
  await plane.pipelines.setState(ids.pipelineId, ids.updateId, "RUNNING");
  await plane.events.appendAll(events);
  return true;
}
