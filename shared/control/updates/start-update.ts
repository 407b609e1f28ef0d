import { checkSchemaChanges } from "../../engine/schema-check.ts";
import { checkHeadStates } from "../../engine/stateful/state-compatibility.ts";
import { checkCdcHeadStates } from "../../engine/auto-cdc/cdc-compatibility.ts";
import type { StartUpdateBody } from "../../api/request-schemas.ts";
import { parseRefreshRequest } from "../../rewind/refresh-request.ts";
import { planRefresh, type RefreshPlan } from "../../rewind/refresh-plan.ts";
import type { FlowDefinition } from "../../pipeline/definition-schema.ts";
import type { ValidatedPipeline } from "../../pipeline/validate-pipeline.ts";
import { planRewind, type RewindPlan } from "../../rewind/rewind-plan.ts";
import { parseRewindSpec } from "../../rewind/rewind-spec.ts";
import { checkUpdateAllowed, assertBegun } from "../../rewind/update-guard.ts";
import type { UpdateRecord } from "../../store/updates-repository.ts";
import {
  orderedRunDetails,
  refreshFieldsOf,
  updateKindOf,
  type OrderedRunStep,
  type UpdateIntent,
} from "./update-intent.ts";
import { recordRewindPlan } from "./rewind-plan-record.ts";
import { isStatefulFlow } from "../../engine/stateful/stateful-batch.ts";
import { stateDefinitionDrift, type StateDefinitionDrift } from "../../engine/stateful/state-definition.ts";
import { recorder } from "./update-events.ts";
import { updateStarted } from "./lifecycle-event-builders.ts";
import { releaseStaleUpdate } from "./stale-update.ts";
import { resendLatestUndelivered } from "./update-end-events.ts";
import { publishOnce } from "../plane/lifecycle-events.ts";
import {
  loadPipeline,
  requirePipeline,
  rewindEnvironment,
  type ControlPlane,
} from "../plane/control-plane.ts";
import { InvalidParameterError } from "../../errors/coded-error.ts";
import { DatasetCatalog } from "../../engine/dataset-catalog.ts";
import { firstRefusedBySpark } from "../../engine/spark/update-refusal.ts";
import { FlowNotSupportedOnSparkError } from "../../engine/spark/errors.ts";

/**
 * Starting an update (api.md "Updates"; semantics.md "Rewind request": every check runs here,
 * synchronously, so an invalid request starts nothing and blocks nothing):
 *
 * 1. The pipeline exists; its current definition is the one the update runs. An active update whose
 *    execution is gone is FAILED and the pipeline released first (stale-update.ts).
 * 2. The request, parsed once into the update's intent (update-intent.ts): a `rewind_spec` (parsed,
 *    then planned against storage: target, cascade, retention, files, checkpoints — the same checks
 *    as a dry run; the plan is recorded for the steps, rewind-plan-record.ts) or refresh fields
 *    (parsed and planned: selections must name datasets or flows of the pipeline). Both at once is
 *    refused.
 *    A run whose definition changed since the tables were last written has its flows' output schemas
 *    checked against their tables: an incompatible change is refused here (`INCOMPATIBLE_SCHEMA_CHANGE`),
 *    and so is a stateful flow whose operators no longer match the state it continues from
 *    (`INCOMPATIBLE_STATE`), or an AUTO CDC flow whose keys, sequence or columns do not
 *    (`AUTO_CDC_STATE_INCOMPATIBLE`).
 * 3. The pipeline may start one: not busy (`PIPELINE_BUSY`), not rewind-blocked for a non-rewind
 *    (`PIPELINE_REWIND_INCOMPLETE`).
 * 4. Record the update QUEUED with the ARN of its execution-to-be, take the pipeline (a lost race is
 *    `PIPELINE_BUSY`, and the update that never began is removed, so listings and SDK waiters follow
 *    the winner), record a rewind's plan, write `create_update`, start the execution named after the
 *    update id, and publish "Update Started" (docs/events.md).
 */

export async function startUpdate(
  plane: ControlPlane,
  pipelineId: string,
  body: StartUpdateBody,
  origin: {
    /** A rewind started as part of a cut across pipelines: its create_update event names the cut. */
    readonly cut?: { readonly request_id: string };
    /** A run started as one of an ordered run (control/runs/ordered-run.ts). */
    readonly orderedRun?: OrderedRunStep;
  } = {},
): Promise<{ update_id: string }> {
  const { cut, orderedRun } = origin;
  const record = await releaseStaleUpdate(plane, await requirePipeline(plane, pipelineId));
  await resendLatestUndelivered(plane, pipelineId);
  const { version, pipeline } = await loadPipeline(plane, pipelineId, record.definitionVersion);
  const refreshFields = refreshFieldsOf(body);

  let intent: UpdateIntent;
  let rewind: RewindPlan | undefined;
  let drifts: StateDefinitionDrift[] = [];
  if (body.rewind_spec !== undefined) {
    if (body.engine !== undefined) {
      throw new InvalidParameterError(
        `rewind_spec cannot be combined with engine: a rewind runs no batch; send the rewind, then the replay with engine "${body.engine}" as the next update`,
      );
    }
    if (Object.keys(refreshFields).length > 0) {
      throw new InvalidParameterError(
        `rewind_spec cannot be combined with ${Object.keys(refreshFields).join(", ")}: a rewind runs no transformation; send the rewind, then the run as the next update`,
      );
    }
    const spec = parseRewindSpec(body.rewind_spec, plane.clock());
    if (spec.branch !== undefined) {
      throw new InvalidParameterError(
        `rewind_spec.branch is taken only by POST …/pipelines/{id}/updates of one pipeline: make each pipeline's branch there`,
      );
    }
    checkUpdateAllowed(record, pipeline.settings, "rewind");
    rewind = await planRewind(rewindEnvironment(plane, pipelineId, pipeline), spec);
    intent = {
      kind: "rewind",
      dryRun: spec.dryRun,
      target: spec.target,
      ...(spec.datasets ? { datasets: spec.datasets } : {}),
      ...(cut ? { cutRequestId: cut.request_id } : {}),
    };
  } else {
    const refresh = parseRefreshRequest(refreshFields);
    const plan = planRefresh(pipeline, refresh);
    checkUpdateAllowed(
      record,
      pipeline.settings,
      "other",
      plan.resets.map((r) => r.dataset),
    );
    const refused = firstRefusedBySpark(new DatasetCatalog(pipeline, plane.bucket), plan, body.engine);
    if (refused)
      throw new FlowNotSupportedOnSparkError(refused.flow, refused.reason, refused.kind, refused.wayOut);
    // Unless the last completed run was of this very version, a deploy or a rewind came in between.
    if (record.tablesWrittenBy !== version) {
      // Read-only checks, side by side; a schema problem is named before a state problem.
      const checks = await Promise.allSettled([
        checkSchemaChanges(pipeline, plane.bucket, {
          run: plan.run,
          reset: plan.resets.filter((r) => r.reset.how === "DROP").map((r) => r.dataset),
        }),
        checkHeadStates(
          plane.bucket,
          plane.checkpoints,
          pipelineId,
          continuingFlows(pipeline, plan),
          pipeline,
        ),
        checkCdcHeadStates(
          pipeline,
          plane.bucket,
          plane.checkpoints,
          pipelineId,
          continuingFlows(pipeline, plan),
        ),
      ]);
      for (const check of checks) if (check.status === "rejected") throw check.reason;
      drifts = await headStateDrifts(plane, pipelineId, continuingFlows(pipeline, plan));
    }
    intent = {
      kind: "run",
      refresh,
      validateOnly: body.validate_only,
      continuous: pipeline.definition.continuous,
      ...(orderedRun ? { orderedRun } : {}),
      ...(body.engine ? { engine: body.engine } : {}),
      ...(body.branch !== undefined ? { branch: body.branch } : {}),
    };
  }

  const update = await plane.updates.create({
    pipelineId,
    cause: body.cause,
    definitionVersion: version,
    request: { ...body, mode: pipeline.definition.continuous ? "CONTINUOUS" : "DEFAULT" },
    intent,
    state: "QUEUED",
    executionArnOf: (updateId) => plane.executions.arnOf({ pipelineId, updateId }),
  });
  const begun = await plane.pipelines.beginUpdate(pipelineId, update.updateId, "STARTING", {
    restoresTables: rewind !== undefined && !rewind.dryRun,
  });
  if (begun.outcome === "pipeline-busy") {
    // The loser never began: it leaves no update behind, so the winner is the latest update.
    if (!(await plane.updates.discard(pipelineId, update.updateId)))
      await plane.updates.transition(pipelineId, update.updateId, "CANCELED", {
        error: { errorCode: "PIPELINE_BUSY", message: `update ${begun.activeUpdateId} started first` },
      });
  }
  assertBegun(begun);
  if (rewind) await recordRewindPlan(plane.bucket, update, rewind, cut?.request_id);
  const events = recorder(plane, update, pipeline.definition.name);
  await events.createUpdate({
    cause: body.cause,
    definition_version: version,
    request: update.request,
    ...(cut ? { cut } : {}),
    ...(orderedRun ? { ordered_run: orderedRunDetails(orderedRun) } : {}),
  });
  for (const drift of drifts) {
    await events.warning(
      drift.message,
      {
        state_definition_drift: { flow: drift.flow, checkpoint_seq: drift.checkpointSeq, state: drift.state },
      },
      { flow_name: drift.flow, flow_id: drift.flow },
    );
  }
  if (drifts.length > 0) await events.flush();
  await launch(plane, update);
  await publishOnce(
    plane,
    updateStarted(
      { ...update, pipelineName: pipeline.definition.name, time: plane.clock() },
      {
        updateKind: updateKindOf(intent),
        cause: body.cause,
        definitionVersion: version,
        cutId: cut?.request_id,
      },
    ),
  );
  return { update_id: update.updateId };
}

/**
 * The continuing stateful flows whose state at HEAD was built under another definition of their
 * query (after a deploy, or a rewind into an open window): allowed, and said by a warning event.
 */
async function headStateDrifts(
  plane: ControlPlane,
  pipelineId: string,
  flows: readonly FlowDefinition[],
): Promise<StateDefinitionDrift[]> {
  const drifts: StateDefinitionDrift[] = [];
  for (const flow of flows.filter(isStatefulFlow)) {
    const ref = { pipelineId, flowId: flow.name };
    const head = (await plane.checkpoints.head(ref)).checkpoint;
    const drift = await stateDefinitionDrift(plane.bucket, ref, flow, head);
    if (drift) drifts.push(drift);
  }
  return drifts;
}

/** The flows that run and continue from their HEAD (their checkpoints are not reset by the update). */
function continuingFlows(pipeline: ValidatedPipeline, plan: RefreshPlan): FlowDefinition[] {
  const reset = new Set(plan.checkpointResets.map((ref) => ref.flow));
  const resetDatasets = new Set(plan.resets.filter((r) => r.reset.how !== "NONE").map((r) => r.dataset));
  const flows: FlowDefinition[] = [];
  for (const dataset of pipeline.definition.datasets) {
    if (
      dataset.type !== "streaming_table" ||
      !plan.run.includes(dataset.name) ||
      resetDatasets.has(dataset.name)
    )
      continue;
    for (const flow of dataset.flows) if (!reset.has(flow.name)) flows.push(flow);
  }
  return flows;
}

/** Starts the execution; if that fails the update is FAILED and the pipeline released (a publish too). */
export async function launch(plane: ControlPlane, update: UpdateRecord): Promise<void> {
  const { pipelineId, updateId } = update;
  try {
    const executionArn = await plane.executions.start({ pipelineId, updateId });
    // Recorded with the update already, unless the runner named it otherwise.
    if (executionArn !== update.executionArn)
      await plane.updates.recordExecution(pipelineId, updateId, executionArn);
  } catch (error) {
    const message = `could not start the update's execution: ${error instanceof Error ? error.message : String(error)}`;
    await plane.updates.transition(pipelineId, updateId, "FAILED", {
      error: { errorCode: "INTERNAL_ERROR", message },
    });
    await plane.pipelines.endUpdate(pipelineId, updateId, "FAILED");
    throw error;
  }
}
