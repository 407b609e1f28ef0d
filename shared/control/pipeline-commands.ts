import { validatePipeline } from "../pipeline/validate-pipeline.ts";
import { InvalidStateError, ResourceConflictError } from "../api/errors.ts";
import type { CreatePipelineBody, EditPipelineBody } from "../api/request-schemas.ts";
import { listRewindPoints } from "../rewind/rewind-points.ts";
import { PipelineBusyError } from "../rewind/errors.ts";
import { loadPipeline, requirePipeline, rewindEnvironment, type ControlPlane } from "./control-plane.ts";
import { LATEST_UPDATES_SHOWN, pipelineDetails, pipelineSpec, pipelineSummary } from "./pipeline-views.ts";
import { purgeTables } from "./purge-tables.ts";
import { TableOwnedError } from "../store/errors.ts";

/**
 * Creating, reading, editing and deleting pipelines (api.md "Pipelines"). A definition is validated
 * in full before it is stored (every problem named at once); an edit stores a new definition version,
 * which is how a fix is deployed. Each table belongs to one pipeline: a create or edit that declares a
 * table another pipeline owns is refused (`TABLE_OWNED_BY_ANOTHER_PIPELINE`, 409, naming the owner).
 */

/** Claims left by a pipeline deleted part-way (before it released them) are freed, then retried. */
const ORPHAN_CLAIM_RETRIES = 3;

async function claiming<T>(plane: ControlPlane, write: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await write();
    } catch (error) {
      if (!(error instanceof TableOwnedError) || attempt >= ORPHAN_CLAIM_RETRIES) throw error;
      if (await plane.pipelines.get(error.ownerPipelineId)) throw error;
      await plane.pipelines.releaseTables(error.ownerPipelineId, [error.table]);
    }
  }
}

export async function createPipeline(
  plane: ControlPlane,
  body: CreatePipelineBody,
): Promise<{ pipeline_id: string }> {
  const { definition, ...settings } = body;
  const validated = await validatePipeline({ ...settings, datasets: definition.datasets }, plane.sql);
  const record = await claiming(plane, () => plane.pipelines.create(validated.definition));
  return { pipeline_id: record.pipelineId };
}

export async function listPipelines(plane: ControlPlane, maxResults?: number) {
  const records = await plane.pipelines.list();
  const shown = records.filter((r) => r.state !== "DELETED").slice(0, maxResults ?? records.length);
  return { statuses: shown.map(pipelineSummary) };
}

export async function getPipeline(plane: ControlPlane, pipelineId: string) {
  const record = await requirePipeline(plane, pipelineId);
  const [{ pipeline }, updates] = await Promise.all([
    loadPipeline(plane, pipelineId),
    plane.updates.list(pipelineId, { limit: LATEST_UPDATES_SHOWN }),
  ]);
  const points = pipeline.settings.rewindEnabled
    ? await listRewindPoints(rewindEnvironment(plane, pipelineId, pipeline))
    : [];
  return pipelineDetails(record, pipeline.definition, updates.items, points[0]);
}

export async function editPipeline(plane: ControlPlane, pipelineId: string, body: EditPipelineBody) {
  const record = await requirePipeline(plane, pipelineId);
  if (
    body.expected_definition_version !== undefined &&
    body.expected_definition_version !== record.definitionVersion
  ) {
    throw new ResourceConflictError(
      `the pipeline is at definition version ${record.definitionVersion}, not ${body.expected_definition_version}: read it again and re-apply your edit`,
    );
  }
  const current = pipelineSpec((await plane.pipelines.getDefinition(pipelineId)).definition);
  const { expected_definition_version: _expected, definition, ...settings } = body;
  if (
    (settings.catalog ?? current.catalog) !== current.catalog ||
    (settings.schema ?? current.schema) !== current.schema
  ) {
    throw new InvalidStateError(
      "catalog and schema cannot change: the pipeline's tables live under them; create a new pipeline instead",
    );
  }
  const merged = {
    name: settings.name ?? current.name,
    catalog: current.catalog,
    schema: current.schema,
    configuration: settings.configuration ?? current.configuration,
    continuous: settings.continuous ?? current.continuous,
    datasets: (definition ?? current.definition).datasets,
  };
  const validated = await validatePipeline(merged, plane.sql);
  const edited = await claiming(plane, () =>
    plane.pipelines.edit(pipelineId, validated.definition, record.definitionVersion),
  );
  if (edited.outcome === "version-conflict") {
    throw new ResourceConflictError(
      `the pipeline was edited concurrently (now at definition version ${edited.currentVersion}): read it again and re-apply your edit`,
    );
  }
  return { definition_version: edited.version };
}

export async function deletePipeline(
  plane: ControlPlane,
  pipelineId: string,
  purge: boolean,
): Promise<Record<string, never>> {
  await requirePipeline(plane, pipelineId);
  // A purged table stays claimed until its files are gone, so no other pipeline starts writing it.
  const deleted = await plane.pipelines.delete(pipelineId, { keepTables: purge });
  if (deleted.outcome === "pipeline-busy") throw new PipelineBusyError(deleted.activeUpdateId);
  if (purge) {
    await purgeTables(plane.bucket, deleted.tables);
    await plane.pipelines.releaseTables(pipelineId, deleted.tables);
  }
  return {};
}
