import { DuckSession } from "../duck/duck-session.ts";
import { ScratchFolder } from "../duck/scratch-folder.ts";
import { selectByName } from "../pipeline/selection.ts";
import type { ValidatedPipeline } from "../pipeline/validate-pipeline.ts";
import type { CheckpointsRepository } from "../store/checkpoints-repository.ts";
import type { EventLogRepository } from "../store/event-log-repository.ts";
import type { ObjectStore } from "../store/object-store.ts";
import type { UpdateCause, UpdateState, UpdatesRepository } from "../store/updates-repository.ts";
import type { CrashHook } from "./crash-points.ts";
import { DatasetCatalog } from "./dataset-catalog.ts";
import { EngineError, UpdateCanceledError } from "./errors.ts";
import { EventRecorder } from "./event-recorder.ts";
import { runFlowUntilCaughtUp, type FlowProgress } from "./flow-runner.ts";
import { refreshMaterializedView, type ViewRefresh } from "./materialized-view.ts";
import type { SinkSession } from "./table-sink.ts";

/**
 * An update, in process (issue 4 "Running an update"; the Step Functions tasks call the same pieces):
 *
 * 1. Record the update (INITIALIZING) with the definition version it runs; `create_update`.
 * 2. Plan: the selected datasets in DAG order (levels); `planning_information`.
 * 3. SETTING_UP_TABLES: nothing to create ahead: a table is created by its first write, from the
 *    schema of what its query produces.
 * 4. RUNNING, level by level: each streaming table's selected flows run micro-batches until caught up;
 *    each materialized view then recomputes from its inputs' snapshots (one overwrite commit); views
 *    are not stored.
 * 5. COMPLETED, or FAILED with the error (event with message and stack), or CANCELED when stopped.
 */

export interface EngineServices {
  /** The pipeline's bucket (root view): tables and source state. */
  readonly store: ObjectStore;
  readonly checkpoints: CheckpointsRepository;
  readonly updates: UpdatesRepository;
  readonly events: EventLogRepository;
  /** The store rooted at an external location (`s3://bucket/prefix` or a local folder). */
  readonly locate: (location: string) => ObjectStore;
  /** Epoch milliseconds. @default Date.now */
  readonly clock?: () => number;
  /** Test hook: crash injection in every micro-batch. */
  readonly crash?: CrashHook;
}

export interface UpdateRequest {
  readonly pipelineId: string;
  readonly pipeline: ValidatedPipeline;
  readonly definitionVersion: number;
  /** Datasets or flows to run (case-insensitive, may be qualified); all when absent. */
  readonly selection?: readonly string[];
  readonly cause?: UpdateCause;
  /** An update already recorded (by start-update); one is created otherwise. */
  readonly updateId?: string;
  /** Asked between batches; true stops the update (CANCELED). */
  readonly shouldStop?: () => Promise<boolean>;
}

export interface UpdateResult {
  readonly updateId: string;
  readonly state: Extract<UpdateState, "COMPLETED" | "FAILED" | "CANCELED">;
  readonly flows: Readonly<Record<string, FlowProgress>>;
  readonly views: Readonly<Record<string, ViewRefresh>>;
  readonly error?: unknown;
}

export async function runUpdate(services: EngineServices, request: UpdateRequest): Promise<UpdateResult> {
  const clock = services.clock ?? Date.now;
  const { pipelineId, pipeline } = request;
  // The update record and the engine's DuckDB session are independent: set both up at once.
  const [recorded, opened, created] = await Promise.allSettled([
    request.updateId ??
      services.updates
        .create({
          pipelineId,
          cause: request.cause ?? "API_CALL",
          definitionVersion: request.definitionVersion,
          request: { selection: request.selection ?? null },
        })
        .then((record) => record.updateId),
    DuckSession.open(),
    ScratchFolder.create("ebb-update-"),
  ]);
  if (recorded.status === "rejected" || opened.status === "rejected" || created.status === "rejected") {
    if (opened.status === "fulfilled") opened.value.close();
    if (created.status === "fulfilled") await created.value.dispose();
    throw [recorded, opened, created].find((r) => r.status === "rejected")!.reason;
  }
  const [updateId, duck, scratch] = [recorded.value, opened.value, created.value];
  const events = new EventRecorder(
    services.events,
    { pipeline_id: pipelineId, pipeline_name: pipeline.definition.name, update_id: updateId },
    clock,
  );
  // State changes join the event queue: recorded in order, behind the work rather than in its way.
  const moveTo = async (state: UpdateState, error?: unknown) => {
    await events.enqueue(() =>
      services.updates.transition(
        pipelineId,
        updateId,
        state,
        error === undefined ? {} : { error: updateError(error) },
      ),
    );
    await events.updateProgress(state, error);
  };

  const flows: Record<string, FlowProgress> = {};
  const views: Record<string, ViewRefresh> = {};
  const session: SinkSession = { duck, scratch, clock };
  try {
    await events.createUpdate({
      cause: request.cause ?? "API_CALL",
      definition_version: request.definitionVersion,
      selection: request.selection ?? null,
    });
    await moveTo("INITIALIZING");
    const selected = selectByName(pipeline, request.selection);
    const catalog = new DatasetCatalog(pipeline, services.store);
    await events.planningInformation({
      definition_version: request.definitionVersion,
      levels: pipeline.graph.levels,
      datasets: selected.datasets,
      flows: selected.flows.map((f) => `${f.dataset}.${f.flow}`),
    });
    await moveTo("SETTING_UP_TABLES");
    await moveTo("RUNNING");
    const selectedFlows = new Set(selected.flows.map((f) => f.flow));
    const runDatasets = pipeline.graph.levels
      .flat()
      .filter((name) => selected.datasets.includes(name) || selected.flows.some((f) => f.dataset === name));
    for (const name of runDatasets) {
      const dataset = catalog.dataset(name);
      if (dataset.type === "streaming_table") {
        for (const flow of dataset.flows) {
          if (!selectedFlows.has(flow.name)) continue;
          try {
            flows[flow.name] = await runFlowUntilCaughtUp(
              {
                pipelineId,
                updateId,
                dataset,
                flow,
                catalog,
                checkpoints: services.checkpoints,
                session,
                locate: services.locate,
                ...(services.crash ? { crash: services.crash } : {}),
              },
              events,
              request.shouldStop,
            );
            await events.flowStatus(name, flow.name, "COMPLETED", { metrics: flows[flow.name] });
          } catch (error) {
            await events.flowStatus(name, flow.name, "FAILED", {}, error);
            throw error;
          }
        }
      } else if (dataset.type === "materialized_view" && selected.datasets.includes(name)) {
        views[name] = await refreshMaterializedView(dataset, catalog, session);
      }
    }
    await events.flush();
    await moveTo("COMPLETED");
    await events.flush();
    return { updateId, state: "COMPLETED", flows, views };
  } catch (error) {
    const state = error instanceof UpdateCanceledError ? "CANCELED" : "FAILED";
    await moveTo(state, error);
    await events.flush().catch(() => undefined);
    return { updateId, state, flows, views, error };
  } finally {
    duck.close();
    await scratch.dispose();
  }
}

function updateError(error: unknown): { errorCode?: string; message: string } {
  if (error instanceof EngineError) return { errorCode: error.errorCode, message: error.message };
  const code = (error as { errorCode?: unknown }).errorCode;
  return {
    ...(typeof code === "string" ? { errorCode: code } : {}),
    message: error instanceof Error ? error.message : String(error),
  };
}
