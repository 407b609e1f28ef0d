import type { ValidatedPipeline } from "../../pipeline/validate-pipeline.ts";
import { tableDatasets } from "../../rewind/pipeline-datasets.ts";
import { EVENT_TYPES } from "../../rewind/rewind-events.ts";
import { branchBucket } from "../../store/branch-bucket.ts";
import { branchPipelineId, parseBranchId, tablePrefix } from "../../store/bucket-layout.ts";
import { UpdateNotFoundError } from "../../store/errors.ts";
import type { EventLogRepository, NewEvent } from "../../store/event-log-repository.ts";
import type { PipelinesRepository } from "../../store/pipelines-repository.ts";
import type { UpdateRecord, UpdatesRepository } from "../../store/updates-repository.ts";
import type { LifecycleEvent } from "../../api/lifecycle-events.ts";
import { loadPipeline, type ControlPlane } from "../plane/control-plane.ts";
import type { LifecycleEvents } from "../plane/lifecycle-events.ts";

/**
 * The control plane an update on a branch runs with (docs/branches.md "Replay on a branch"), chosen
 * once where a step's plane is made (`planeOfUpdate`): the update's steps are live's, unchanged, run
 * under the branch's own pipeline identity `<pipelineId>~<branch>`:
 *
 * - the pipeline item `<pipelineId>~<branch>` is the busy lock and the checkpoint fence (an update on
 *   the branch never holds live, nor live's the branch); its definition is live's current one;
 * - the checkpoints and the state are the branch's (`<pipelineId>~<branch>#<flow>`, copied when the
 *   branch was made), and so are the txn app ids its writes carry;
 * - the bucket's table logs are the branch's (store/branch-bucket.ts);
 * - the update's record and its events are live's pipeline's, so the pipeline's update list and event
 *   log show the update, its events naming the branch (`origin.branch`). The rewind points the branch's
 *   updates capture stay the branch's (kept under its identity), not live's.
 */
export function branchPlane(
  plane: ControlPlane,
  pipelineId: string,
  branch: string,
  pipeline: ValidatedPipeline,
): ControlPlane {
  const branchId = branchPipelineId(pipelineId, branch);
  const { catalog, schema } = pipeline.definition;
  const folders = tableDatasets(pipeline).map((table) => tablePrefix({ catalog, schema, table }));
  return overlay(plane, {
    bucket: branchBucket(plane.bucket, folders, branch),
    pipelines: branchPipelines(plane.pipelines, pipelineId, branchId),
    updates: branchUpdates(plane.updates, pipelineId, branchId),
    events: branchEvents(plane.events, pipelineId, branchId, branch),
    get lifecycle() {
      return lifecycleOfLive(plane.lifecycle, pipelineId);
    },
  });
}

/**
 * `base` with the ports in `replaced` replaced; every other port is `base`'s, read when asked (a
 * plane may make some of its ports lazily, so they are not copied).
 */
function overlay<T extends object>(base: T, replaced: Partial<T>): T {
  return new Proxy(base, {
    get: (target, key) => (key in replaced ? Reflect.get(replaced, key) : Reflect.get(target, key)),
  });
}

/**
 * Lifecycle events as listeners know the pipeline: the branch update's claims stay under its own
 * identity (the outbox), but the events leave naming live's pipeline id, as its update record does.
 */
function lifecycleOfLive(events: LifecycleEvents, pipelineId: string): LifecycleEvents {
  return {
    hasDestination: events.hasDestination,
    publish: (event, delivered) =>
      events.publish(
        { ...event, detail: { ...event.detail, pipeline_id: pipelineId } } as LifecycleEvent,
        delivered,
      ),
  };
}

/**
 * The plane a step of `ids`' update runs with: the plane itself for a live update, `branchPlane` for
 * one whose pipeline id is a branch's (its update record says the definition version it runs).
 */
export async function planeOfUpdate(
  plane: ControlPlane,
  ids: { readonly pipelineId: string; readonly updateId: string },
): Promise<ControlPlane> {
  const branch = parseBranchId(ids.pipelineId);
  if (!branch) return plane;
  const update = await plane.updates.get(branch.pipelineId, ids.updateId);
  if (!update) throw new UpdateNotFoundError(ids.pipelineId, ids.updateId);
  const { pipeline } = await loadPipeline(plane, branch.pipelineId, update.definitionVersion);
  return branchPlane(plane, branch.pipelineId, branch.branch, pipeline);
}

function branchPipelines(
  pipelines: PipelinesRepository,
  pipelineId: string,
  branchId: string,
): PipelinesRepository {
  const live = (id: string) => (id === branchId ? pipelineId : id);
  return {
    ...bindAll(pipelines),
    // The branch's item holds its updates; live's record names the definition it runs.
    async get(id) {
      if (id !== branchId) return pipelines.get(id);
      const [own, current] = await Promise.all([pipelines.get(branchId), pipelines.get(pipelineId)]);
      if (!own || !current || current.state === "DELETED") return undefined;
      return { ...own, name: current.name, definitionVersion: current.definitionVersion };
    },
    getDefinition: (id, version) => pipelines.getDefinition(live(id), version),
    listDefinitions: (id) => pipelines.listDefinitions(live(id)),
  };
}

function branchUpdates(updates: UpdatesRepository, pipelineId: string, branchId: string): UpdatesRepository {
  const live = (id: string) => (id === branchId ? pipelineId : id);
  // The steps see the update under the identity they run it with.
  const seen = (record: UpdateRecord): UpdateRecord =>
    record.pipelineId === pipelineId ? { ...record, pipelineId: branchId } : record;
  return {
    create: async (update) => seen(await updates.create({ ...update, pipelineId: live(update.pipelineId) })),
    get: async (id, updateId) => {
      const record = await updates.get(live(id), updateId);
      return record && seen(record);
    },
    list: async (id, page) => {
      const listed = await updates.list(live(id), page);
      return { ...listed, items: listed.items.map(seen) };
    },
    transition: async (id, updateId, state, details) => {
      const result = await updates.transition(live(id), updateId, state, details);
      return { ...result, update: seen(result.update) };
    },
    transitionWith: (id, updateId, state, writes) =>
      updates.transitionWith(live(id), updateId, state, writes),
    recordExecution: (id, updateId, arn) => updates.recordExecution(live(id), updateId, arn),
    requestHandover: (id, updateId, at) => updates.requestHandover(live(id), updateId, at),
    discard: (id, updateId) => updates.discard(live(id), updateId),
  };
}

function branchEvents(
  events: EventLogRepository,
  pipelineId: string,
  branchId: string,
  branch: string,
): EventLogRepository {
  const live = (id: string) => (id === branchId ? pipelineId : id);
  const named = (event: NewEvent): NewEvent =>
    event.origin.pipeline_id !== branchId || event.event_type === EVENT_TYPES.rewindSummary
      ? event
      : { ...event, origin: { ...event.origin, pipeline_id: pipelineId, branch } };
  return {
    append: (event) => events.append(named(event)),
    appendAll: (list) => events.appendAll(list.map(named)),
    appendWrites: (list) => events.appendWrites(list.map(named)),
    get: (id, eventId) => events.get(live(id), eventId),
    query: (id, query, page) => events.query(live(id), query, page),
  };
}

/** A repository's methods bound to it, so a view can spread them and replace some. */
function bindAll<T extends object>(target: T): T {
  const bound: Record<string, unknown> = {};
  let proto: object | null = target;
  while (proto && proto !== Object.prototype) {
    for (const key of Object.getOwnPropertyNames(proto)) {
      const value = (target as Record<string, unknown>)[key];
      if (key !== "constructor" && typeof value === "function" && !(key in bound))
        bound[key] = (value as (...args: unknown[]) => unknown).bind(target);
    }
    proto = Object.getPrototypeOf(proto) as object | null;
  }
  return bound as T;
}
