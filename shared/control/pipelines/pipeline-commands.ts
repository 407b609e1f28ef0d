import { setTimeout as sleep } from "node:timers/promises";
import { pipelineTables } from "../../pipeline/pipeline-tables.ts";
import { validatePipeline } from "../../pipeline/validate-pipeline.ts";
import { checkDefinitionLocations, checkSourceLocation } from "../../pipeline/source-location-policy.ts";
import { InvalidStateError, ResourceAlreadyExistsError, ResourceConflictError } from "../../api/errors.ts";
import type { CreatePipelineBody, EditPipelineBody } from "../../api/request-schemas.ts";
import { pipelineNameFilter } from "../../api/pipeline-filter.ts";
import { listRewindPoints } from "../../rewind/rewind-points.ts";
import { PipelineBusyError } from "../../rewind/errors.ts";
import {
  loadPipeline,
  requirePipeline,
  rewindEnvironment,
  type ControlPlane,
} from "../plane/control-plane.ts";
import { LATEST_UPDATES_SHOWN, pipelineDetails, pipelineSpec, pipelineStatus } from "./pipeline-views.ts";
import { pipelinePage, type PipelinePageRequest } from "./pipeline-pages.ts";
import { purgeTables } from "./purge-tables.ts";
import { discardAllBranches } from "../branches/discard-branch.ts";
import { refuseUnownedTables } from "./unowned-tables.ts";
import { resolveDatabricksSettings, type DefinitionFileReader } from "./databricks-settings.ts";
import { TableOwnedError } from "../../store/errors.ts";
import { ObjectNotFoundError } from "../../object-store/errors.ts";
import { tablePropertiesError } from "../../delta/index.ts";
import { InvalidParameterError } from "../../errors/coded-error.ts";
import { locateDefinitionError, type ProjectLocation } from "../../project/index.ts";
import { editWarningEvents, editWarnings } from "./edit-warnings.ts";

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

/**
 * → `{pipeline_id}`, or with `dry_run` the `effective_settings` and nothing created; either with the
 * `ignored_settings` Ebb accepted but does not act on.
 */
export async function createPipeline(plane: ControlPlane, body: CreatePipelineBody) {
  const { dry_run: dryRun, allow_duplicate_names: allowDuplicates, ...settings } = body;
  const { ignored, locate, ...resolved } = await resolveDatabricksSettings(
    settings,
    definitionFileReader(plane),
  );
  const validated = await validateLocated(plane, resolved, locate);
  checkDefinitionLocations(validated.definition, plane.localRoots);
  if (allowDuplicates === false) await refuseDuplicateName(plane, validated.definition.name);
  const reported = ignored.length > 0 ? { ignored_settings: ignored } : {};
  await refuseUnownedTables(plane, validated.definition);
  if (dryRun) return { effective_settings: pipelineSpec(validated.written), ...reported };
  const record = await claiming(plane, () => plane.pipelines.create(validated.written));
  return { pipeline_id: record.pipelineId, ...reported };
}

/** `request.filter` is read again with each page (the SDKs send it with each). */
export async function listPipelines(
  plane: ControlPlane,
  request: PipelinePageRequest & { readonly filter?: string } = {},
) {
  const named = pipelineNameFilter(request.filter);
  const records = (await plane.pipelines.list()).filter((r) => r.state !== "DELETED" && named(r.name));
  const { shown, nextPageToken } = pipelinePage(records, request);
  const latest = await Promise.all(
    shown.map((r) => plane.updates.list(r.pipelineId, { limit: LATEST_UPDATES_SHOWN })),
  );
  return {
    statuses: shown.map((record, i) => pipelineStatus(record, latest[i]!.items)),
    ...(nextPageToken ? { next_page_token: nextPageToken } : {}),
  };
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

/**
 * An edit that names no version it expects (`expected_definition_version`, `expected_last_modified`)
 * is applied over whatever edit landed first, as Databricks does: the last writer wins. These many
 * tries, a short random wait apart (racers that retried in step collided again: 3 of a burst of 8
 * were refused), cover a burst of such edits; past them the caller is told to retry.
 */
const LAST_WRITER_ATTEMPTS = 10;
const LAST_WRITER_WAIT_MS = 20;

export async function editPipeline(plane: ControlPlane, pipelineId: string, body: EditPipelineBody) {
  const unconditional =
    body.expected_definition_version === undefined && body.expected_last_modified === undefined;
  for (let attempt = 1; ; attempt++) {
    const edited = await editOnce(plane, pipelineId, body);
    if (!("conflict" in edited)) return edited;
    if (!unconditional)
      throw new ResourceConflictError(
        `the pipeline was edited concurrently (now at definition version ${edited.conflict}): read it again and re-apply your edit`,
      );
    if (attempt >= LAST_WRITER_ATTEMPTS)
      throw new ResourceConflictError(
        `the pipeline is being edited by others right now (definition version ${edited.conflict}): retry the edit`,
      );
    await sleep(Math.random() * LAST_WRITER_WAIT_MS * attempt);
  }
}

async function editOnce(plane: ControlPlane, pipelineId: string, body: EditPipelineBody) {
  const record = await requirePipeline(plane, pipelineId);
  const {
    expected_definition_version: expectedVersion,
    expected_last_modified: expectedLastModified,
    pipeline_id: bodyPipelineId,
    id: bodyId,
    allow_duplicate_names: allowDuplicates,
    ...rest
  } = body;
  for (const [field, value] of [
    ["pipeline_id", bodyPipelineId],
    ["id", bodyId],
  ] as const) {
    if (value !== undefined && value !== pipelineId) {
      throw new InvalidParameterError(`${field} "${value}" is not the pipeline edited (${pipelineId})`);
    }
  }
  if (expectedVersion !== undefined && expectedVersion !== record.definitionVersion) {
    throw new ResourceConflictError(
      `the pipeline is at definition version ${record.definitionVersion}, not ${expectedVersion}: read it again and re-apply your edit`,
    );
  }
  if (expectedLastModified !== undefined && expectedLastModified !== record.lastModified) {
    throw new ResourceConflictError(
      `the pipeline was last modified at ${record.lastModified}, not ${expectedLastModified}: read it again and re-apply your edit`,
    );
  }
  const currentDefinition = (await plane.pipelines.getDefinition(pipelineId)).definition;
  const current = pipelineSpec(currentDefinition);
  const { ignored, locate, ...settings } = await resolveDatabricksSettings(rest, definitionFileReader(plane));
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
    datasets: settings.datasets ?? current.definition.datasets,
  };
  if (allowDuplicates === false && merged.name !== current.name)
    await refuseDuplicateName(plane, merged.name);
  const validated = await validateLocated(plane, merged, locate);
  checkDefinitionLocations(validated.definition, plane.localRoots);
  await refuseUnownedTables(plane, validated.definition, {
    pipelineId,
    known: new Set(pipelineTables(currentDefinition)),
  });
  const env = rewindEnvironment(plane, pipelineId, validated);
  const warnings = await editWarnings(env, currentDefinition, validated.written);
  // The warnings' events are written with the edit, all or none: an edit is never stored without them.
  const events = plane.events.appendWrites(editWarningEvents(env, warnings));
  const edited = await claiming(plane, () =>
    plane.pipelines.edit(pipelineId, validated.written, record.definitionVersion, events),
  );
  if (edited.outcome === "version-conflict") return { conflict: edited.currentVersion };
  return {
    definition_version: edited.version,
    ...(ignored.length > 0 ? { ignored_settings: ignored } : {}),
    ...(warnings.length > 0 ? { warnings } : {}),
  };
}

/** Validates a definition; one built from a project has its problems placed in the project's files. */
async function validateLocated(
  plane: ControlPlane,
  definition: unknown,
  locate: ((path: string) => ProjectLocation | undefined) | undefined,
) {
  try {
    return await validatePipeline(definition, plane.sql, tablePropertiesError);
  } catch (error) {
    throw locate ? locateDefinitionError(error, locate) : error;
  }
}

/** `allow_duplicate_names: false`: another live pipeline with the name is refused. */
async function refuseDuplicateName(plane: ControlPlane, name: string): Promise<void> {
  const same = (await plane.pipelines.list()).find((p) => p.state !== "DELETED" && p.name === name);
  if (same) {
    throw new ResourceAlreadyExistsError(
      `pipeline ${same.pipelineId} is already named "${name}": pick another name, or send allow_duplicate_names: true`,
    );
  }
}

/** `libraries[].file.path` read through the same locator as auto_loader paths. */
function definitionFileReader(plane: ControlPlane): DefinitionFileReader {
  return async (path) => {
    checkSourceLocation(path, plane.localRoots, "libraries[].file.path");
    const slash = path.lastIndexOf("/");
    try {
      const bytes = await plane.locate(path.slice(0, slash + 1)).get(path.slice(slash + 1));
      return new TextDecoder().decode(bytes);
    } catch (error) {
      if (!(error instanceof ObjectNotFoundError)) throw error;
      throw new InvalidParameterError(
        `libraries: the definition file ${path} does not exist; upload it first, or send the datasets inline as definition`,
      );
    }
  };
}

export async function deletePipeline(
  plane: ControlPlane,
  pipelineId: string,
  purge: boolean,
): Promise<Record<string, never>> {
  const record = await requirePipeline(plane, pipelineId);
  if (record.activeUpdateId) throw new PipelineBusyError(record.activeUpdateId);
  // Its branches first (docs/branches.md "Discard"): a busy branch refuses the delete, live untouched.
  await discardAllBranches(plane, pipelineId);
  // A purged table stays claimed until its files are gone, so no other pipeline starts writing it.
  const deleted = await plane.pipelines.delete(pipelineId, { keepTables: purge });
  if (deleted.outcome === "pipeline-busy") throw new PipelineBusyError(deleted.activeUpdateId);
  if (purge) {
    await purgeTables(plane.bucket, deleted.tables);
    await plane.pipelines.releaseTables(pipelineId, deleted.tables);
  }
  return {};
}
