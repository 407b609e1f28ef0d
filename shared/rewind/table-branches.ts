import { loadSnapshot, TableNotFoundError, type Snapshot } from "../delta/index.ts";
import { listAll, type ObjectStore } from "../object-store/object-store.ts";
import { BRANCHES_FOLDER, branchFolder } from "../store/bucket-layout.ts";
import { branchTableStore } from "../store/branch-table-store.ts";

/**
 * The branches with a log in a table's folder (docs/branches.md "Where a branch lives"), found by
 * their logs rather than their records: what a live write must not take from under a branch is what
 * its log names, and a discarded branch (its log deleted) keeps nothing.
 */
export interface TableBranch {
  readonly name: string;
  /** The branch log's latest snapshot; undefined while its first commit is not made. */
  readonly snapshot: Snapshot | undefined;
}

export async function tableBranches(table: ObjectStore): Promise<TableBranch[]> {
  const names = new Set<string>();
  for await (const object of listAll(table, BRANCHES_FOLDER)) {
    const name = object.key.slice(BRANCHES_FOLDER.length).split("/")[0];
    if (name) names.add(name);
  }
  const branches: TableBranch[] = [];
  for (const name of [...names].sort()) branches.push({ name, snapshot: await branchSnapshot(table, name) });
  return branches;
}

/** Every key the branches' latest snapshots name, relative to the table folder. */
export function keysNamedBy(branches: readonly TableBranch[]): Set<string> {
  return new Set(branches.flatMap((branch) => [...(branch.snapshot?.files.keys() ?? [])]));
}

/** The latest snapshot of a branch's log of the table (undefined: it has none). */
export async function branchSnapshot(table: ObjectStore, branch: string): Promise<Snapshot | undefined> {
  try {
    return await loadSnapshot(branchTableStore(table, branch));
  } catch (error) {
    if (error instanceof TableNotFoundError) return undefined;
    throw error;
  }
}

/** Deletes a branch's log of the table (its data files stay: VACUUM removes what no log names). */
export async function deleteBranchLog(table: ObjectStore, branch: string): Promise<void> {
  let pageToken: string | undefined;
  do {
    const page = await table.list(branchFolder(branch), pageToken ? { pageToken } : {});
    if (page.objects.length > 0) await table.deleteMany(page.objects.map((o) => o.key));
    pageToken = page.nextPageToken;
  } while (pageToken);
}
