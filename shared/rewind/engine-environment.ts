import { DatasetCatalog } from "../engine/dataset-catalog.ts";
import type { EngineServices } from "../engine/update-runner.ts";
import type { ValidatedPipeline } from "../pipeline/validate-pipeline.ts";
import type { PipelinesRepository } from "../store/pipelines-repository.ts";
import type { RewindEnvironment } from "./rewind-environment.ts";

/**
 * The rewind environment of a pipeline from the engine's services, so a rewind, a capture, a reset
 * and the update that replays all see the same tables (`DatasetCatalog`), state files, sources,
 * checkpoints, event log and clock.
 */
export function rewindEnvironment(
  services: EngineServices,
  pipelines: Pick<PipelinesRepository, "get" | "setRewindBlock">,
  pipelineId: string,
  pipeline: ValidatedPipeline,
): RewindEnvironment {
  const catalog = new DatasetCatalog(pipeline, services.store);
  return {
    pipelineId,
    pipeline,
    checkpoints: services.checkpoints,
    events: services.events,
    pipelines,
    tableStore: (dataset) => catalog.tableStore(dataset),
    stateStore: services.store,
    sourceStore: services.locate,
    clock: services.clock ?? Date.now,
  };
}
