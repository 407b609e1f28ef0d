import { loadSnapshot, scanRows, TableNotFoundError, type Snapshot } from "../../delta/index.ts";
import { InvalidParameterError } from "../../errors/coded-error.ts";
import type { ObjectStore } from "../../object-store/object-store.ts";
import { isBranchName } from "../../pipeline/branch-name.ts";
import { writersOf } from "../../rewind/pipeline-datasets.ts";
import { branchRecordsPrefix } from "../../store/bucket-layout.ts";
import type { ValidatedPipeline } from "../../pipeline/validate-pipeline.ts";
import {
  loadPipeline,
  requirePipeline,
  rewindEnvironment,
  type ControlPlane,
} from "../plane/control-plane.ts";
import { toJsonRows } from "../tables/json-values.ts";
import { branchRecordSchema, readBranchRecord, type BranchRecord } from "./branch-record.ts";
import { branchTableStore } from "../../store/branch-table-store.ts";
import { diffRows } from "./row-diff.ts";

/** The branches of a pipeline as the API answers them (docs/branches.md). */

export function branchInfo(record: BranchRecord, versions?: ReadonlyMap<string, number | null>) {
  return {
    name: record.name,
    pipeline_id: record.pipelineId,
    created_at: new Date(record.createdAt).toISOString(),
    rewind_point_id: record.rewindPointId,
    point_timestamp: new Date(record.pointTime).toISOString(),
    tables: record.tables.map((t) => ({
      name: t.identifier,
      from: t.from,
      source_version: t.sourceVersion,
      ...(versions ? { branch_version: versions.get(t.dataset) ?? null } : {}),
    })),
    flows: record.flows.map((f) => ({ flow: f.flow, live_seq: f.liveSeq, branch_seq: f.branchSeq })),
  };
}

/** `GET …/branches`: by name, a page of `max_results` (default 100). */
export async function listBranches(
  plane: ControlPlane,
  pipelineId: string,
  page: { readonly max_results?: number | undefined; readonly page_token?: string | undefined },
) {
  await requirePipeline(plane, pipelineId);
  const prefix = branchRecordsPrefix(pipelineId);
  // The page token is the last branch name listed (Ebb's own, checked), not the store's token.
  const after = page.page_token;
  if (after !== undefined && !isBranchName(after))
    throw new InvalidParameterError(
      `page_token "${after.slice(0, 80)}" is not one this listing gave: list the branches again without it`,
    );
  const listed = await plane.bucket.list(prefix, {
    pageSize: page.max_results ?? 100,
    ...(after !== undefined ? { startAfter: `${prefix}${after}.json` } : {}),
  });
  const branches = await Promise.all(
    listed.objects.map(async (object) =>
      branchInfo(
        branchRecordSchema.parse(JSON.parse(new TextDecoder().decode(await plane.bucket.get(object.key)))),
      ),
    ),
  );
  const last = branches.at(-1)?.name;
  return { branches, ...(listed.nextPageToken && last ? { next_page_token: last } : {}) };
}

/** `GET …/branches/{name}`: the record, and each branch table's latest version. */
export async function getBranch(plane: ControlPlane, pipelineId: string, name: string) {
  const { record, tables } = await openBranch(plane, pipelineId, name);
  const versions = new Map<string, number | null>();
  for (const table of record.tables)
    versions.set(table.dataset, (await latest(tables.branch(table.dataset)))?.version ?? null);
  return { branch: branchInfo(record, versions) };
}

/** `GET …/branches/{name}/diff`: per table, rows only on the branch, only on live, changed by key. */
export async function diffBranch(plane: ControlPlane, pipelineId: string, name: string, maxSamples = 5) {
  const { record, pipeline, tables } = await openBranch(plane, pipelineId, name);
  const diffs = [];
  for (const table of record.tables) {
    const [branch, live] = await Promise.all([
      rowsOf(tables.branch(table.dataset)),
      rowsOf(tables.live(table.dataset)),
    ]);
    const keys = keysOf(pipeline, table.dataset);
    const diff = diffRows(branch.rows, live.rows, keys, maxSamples);
    diffs.push({
      name: table.identifier,
      branch_version: branch.version,
      live_version: live.version,
      keys: keys ?? null,
      only_on_branch: { count: diff.onlyOnBranch.count, samples: [...diff.onlyOnBranch.samples] },
      only_on_live: { count: diff.onlyOnLive.count, samples: [...diff.onlyOnLive.samples] },
      ...(diff.changed
        ? {
            changed: {
              count: diff.changed.count,
              samples: [...diff.changed.samples],
            },
          }
        : {}),
    });
  }
  return { branch: record.name, tables: diffs };
}

/** The record, the pipeline's current definition, and the branch's and live's view of each table. */
export async function openBranch(plane: ControlPlane, pipelineId: string, name: string) {
  await requirePipeline(plane, pipelineId);
  const record = await readBranchRecord(plane.bucket, pipelineId, name);
  const { pipeline } = await loadPipeline(plane, pipelineId);
  const env = rewindEnvironment(plane, pipelineId, pipeline);
  return {
    record,
    pipeline,
    tables: {
      live: env.tableStore,
      branch: (dataset: string) => branchTableStore(env.tableStore(dataset), record.name),
    },
  };
}

/** The AUTO CDC keys of a table that keeps one row per key (SCD type 1), else undefined. */
function keysOf(pipeline: ValidatedPipeline, dataset: string): readonly string[] | undefined {
  const cdc = writersOf(pipeline, dataset).find((flow) => flow.auto_cdc)?.auto_cdc;
  return cdc && cdc.stored_as_scd_type === 1 ? cdc.keys : undefined;
}

async function latest(store: ObjectStore): Promise<Snapshot | undefined> {
  try {
    return await loadSnapshot(store);
  } catch (error) {
    if (error instanceof TableNotFoundError) return undefined;
    throw error;
  }
}

async function rowsOf(store: ObjectStore) {
  const snapshot = await latest(store);
  return {
    version: snapshot?.version ?? null,
    // As JSON values (BIGINT as a number when exact): compared and answered as such.
    rows: snapshot ? toJsonRows((await scanRows(store, snapshot)) as Record<string, unknown>[]) : [],
  };
}
