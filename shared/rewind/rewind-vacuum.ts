import { DeltaTable, type VacuumPlan, type VacuumRequest } from "../delta/index.ts";
import type { RewindEnvironment } from "./rewind-environment.ts";
import { listRewindPoints } from "./rewind-points.ts";

/**
 * VACUUM that respects rewind points (semantics.md "Rewind points"; architecture.md "VACUUM ... never
 * a file that a live rewind point still needs"): the table versions the live points of the pipeline
 * restore are passed to Delta's VACUUM plan as protected versions, so their files are kept whatever
 * their age, and a rewind inside retention cannot fail because of a vacuum.
 */

/** The versions of `dataset` that live rewind points restore, ascending (points of this table only). */
export async function protectedVersions(env: RewindEnvironment, dataset: string): Promise<number[]> {
  const versions = new Set<number>();
  for (const point of await listRewindPoints(env)) {
    const at = point.cut.datasets.get(dataset);
    if (at) versions.add(at.version);
  }
  return [...versions].sort((a, b) => a - b);
}

/** VACUUM of a dataset's table keeping every live point's files (a dry run deletes nothing). */
export async function vacuumDataset(
  env: RewindEnvironment,
  dataset: string,
  request: Omit<VacuumRequest, "protectedVersions"> = {},
): Promise<VacuumPlan & { readonly deleted: boolean; readonly protectedVersions: readonly number[] }> {
  const versions = await protectedVersions(env, dataset);
  const table = await DeltaTable.open(env.tableStore(dataset), { clock: env.clock });
  try {
    const latest = table.snapshot.version;
    // A point whose version the log no longer holds cannot be restored anyway; VACUUM cannot load it.
    const live = versions.filter((v) => v <= latest);
    const plan = await table.vacuum({ ...request, protectedVersions: live });
    return { ...plan, protectedVersions: live };
  } finally {
    await table.close();
  }
}
