import type { ObjectInfo, ObjectStore } from "../object-store/object-store.ts";
import { listAll } from "../object-store/object-store.ts";
import { flowStatePrefix } from "../store/bucket-layout.ts";
import { manifestFiles, stateManifestSchema } from "./state-manifest.ts";
import type { StateFlow } from "./state-keys.ts";

/**
 * VACUUM of a flow's state folder, planned then executed (style.md "Plan, then execute"):
 *
 * 1. The caller names the live keys: the state versions (manifests) of the flow's HEAD and of every
 *    checkpoint a live rewind point names, plus any other state file a checkpoint references (the
 *    auto_loader file set).
 * 2. Every file a live manifest lists is kept with it. Each manifest lists all its files, so older
 *    manifests are not needed to read a live one.
 * 3. Anything else younger than the retention is kept too (a batch in flight, a point being captured).
 * 4. The rest is deleted.
 */

/** Default retention of state files no live point needs, as Delta's VACUUM (7 days). */
export const STATE_RETENTION_MS = 7 * 24 * 3600 * 1000;

export interface StateVacuumPlan {
  readonly keep: readonly string[];
  readonly delete: readonly string[];
}

/** Pure: which files of the listing to delete. `liveFiles` = the live keys and their manifests' files. */
export function planStateVacuum(input: {
  readonly listing: readonly ObjectInfo[];
  readonly liveFiles: ReadonlySet<string>;
  readonly now: number;
  readonly retentionMs?: number;
}): StateVacuumPlan {
  const cutoff = input.now - (input.retentionMs ?? STATE_RETENTION_MS);
  const keep: string[] = [];
  const remove: string[] = [];
  for (const object of input.listing) {
    if (input.liveFiles.has(object.key) || object.lastModified > cutoff) keep.push(object.key);
    else remove.push(object.key);
  }
  return { keep, delete: remove };
}

/** The live keys plus every file their manifests list (keys that are not manifests stand alone). */
export async function liveStateFiles(store: ObjectStore, liveKeys: Iterable<string>): Promise<Set<string>> {
  const live = new Set<string>();
  for (const key of liveKeys) {
    live.add(key);
    if (!key.endsWith(".json")) continue;
    const bytes = await store.get(key).catch(() => undefined);
    if (!bytes) continue;
    let json: unknown;
    try {
      json = JSON.parse(new TextDecoder().decode(bytes));
    } catch {
      continue;
    }
    const manifest = stateManifestSchema.safeParse(json);
    if (manifest.success) for (const file of manifestFiles(manifest.data)) live.add(file);
  }
  return live;
}

/** Plans, and unless `dryRun`, deletes the state files of `flow` no live key needs. */
export async function vacuumFlowState(request: {
  readonly store: ObjectStore;
  readonly flow: StateFlow;
  readonly liveKeys: Iterable<string>;
  readonly now: number;
  readonly retentionMs?: number;
  readonly dryRun?: boolean;
}): Promise<StateVacuumPlan> {
  const listing: ObjectInfo[] = [];
  for await (const object of listAll(
    request.store,
    flowStatePrefix(request.flow.pipelineId, request.flow.flowId),
  ))
    listing.push(object);
  const plan = planStateVacuum({
    listing,
    liveFiles: await liveStateFiles(request.store, request.liveKeys),
    now: request.now,
    ...(request.retentionMs !== undefined ? { retentionMs: request.retentionMs } : {}),
  });
  if (!request.dryRun && plan.delete.length > 0) await request.store.deleteMany(plan.delete);
  return plan;
}
