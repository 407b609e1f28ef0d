/**
 * Where things live in the pipelines' bucket (architecture.md "Storage"): the one place that builds
 * these keys, so every writer and reader (engine, control plane, API, IAM grants) agree on them.
 *
 * - `tables/<catalog>/<schema>/<table>/`: a dataset's Delta table folder.
 * - `state/<pipelineId>/<flowId>/`: a flow's source and operator state files.
 * - `state/<pipelineId>/update-state/<updateId>/`: what one update's steps hand each other (a rewind
 *   plan); the hyphen keeps it apart from every flow's folder (flow ids are identifiers).
 * - `tables/<catalog>/<schema>/<table>/_branches/<name>/_delta_log/`: a branch's log of the table; its
 *   data files are the table folder's (docs/branches.md). `_` hides it from every Delta VACUUM.
 * - `state/<pipelineId>/branch-records/<name>.json`: a branch's record.
 * - `state/<pipelineId>/spark-jobs/<flowId>/<seq>/<attempt>/`: a Spark batch's request, manifest and
 *   state staging (engine/spark/spark-job-folders.ts). Hyphenated, like `update-state`, so no flow's
 *   folder can be it (a flow named `spark` shared the `spark/` folder this replaced).
 * - `statements/<statementId>.json`: a SQL statement's answer, kept for `GET …/statements/{id}`
 *   (the bucket's lifecycle rule removes them).
 */

export const TABLES_PREFIX = "tables/";
export const STATE_PREFIX = "state/";
export const STATEMENTS_PREFIX = "statements/";

/** A table's three-part name. */
export interface TableLocation {
  readonly catalog: string;
  readonly schema: string;
  readonly table: string;
}

/** The key prefix of a table's Delta folder. */
export function tablePrefix(name: TableLocation): string {
  return `${TABLES_PREFIX}${name.catalog}/${name.schema}/${name.table}/`;
}

/** The key prefix of one flow's state files. */
export function flowStatePrefix(pipelineId: string, flowId: string): string {
  return `${STATE_PREFIX}${pipelineId}/${flowId}/`;
}

/** The key of a file one update's steps share. */
export function updateStateKey(pipelineId: string, updateId: string, file: string): string {
  return `${STATE_PREFIX}${pipelineId}/update-state/${updateId}/${file}`;
}

/** The key prefix of flow `flowId`'s Spark jobs (engine/spark/spark-job-folders.ts). */
export function sparkJobsPrefix(pipelineId: string, flowId: string): string {
  return `${STATE_PREFIX}${pipelineId}/spark-jobs/${flowId}/`;
}

/**
 * Where Spark jobs were kept before `sparkJobsPrefix`: `state/<pipelineId>/spark/<flowId>/`, which a
 * flow named `spark` shared. Nothing is written there now; VACUUM removes what is left.
 */
export function legacySparkJobsPrefix(pipelineId: string, flowId: string): string {
  return `${STATE_PREFIX}${pipelineId}/spark/${flowId}/`;
}

/** Inside a table's folder: the folder of its branches' logs. */
export const BRANCHES_FOLDER = "_branches/";

/** Inside a table's folder: the folder of a branch's log (`<this>_delta_log/`). */
export function branchFolder(branch: string): string {
  return `${BRANCHES_FOLDER}${branch}/`;
}

/** The pipeline id a branch's flows are keyed under (checkpoints `<this>#<flow>`, txn app ids `<this>/<flow>`). */
export function branchPipelineId(pipelineId: string, branch: string): string {
  return `${pipelineId}~${branch}`;
}

/** A pipeline id made by `branchPipelineId` (pipeline ids are UUIDs: never a `~`). */
export function isBranchId(pipelineId: string): boolean {
  return pipelineId.includes("~");
}

/** The live pipeline and the branch of a `branchPipelineId`; undefined for a live pipeline's id. */
export function parseBranchId(pipelineId: string): { pipelineId: string; branch: string } | undefined {
  const at = pipelineId.indexOf("~");
  return at < 0 ? undefined : { pipelineId: pipelineId.slice(0, at), branch: pipelineId.slice(at + 1) };
}

/** The key of a branch's record. */
export function branchRecordKey(pipelineId: string, branch: string): string {
  return `${branchRecordsPrefix(pipelineId)}${branch}.json`;
}

/** The key prefix of a pipeline's branch records. */
export function branchRecordsPrefix(pipelineId: string): string {
  return `${STATE_PREFIX}${pipelineId}/branch-records/`;
}

/** The key of a SQL statement's kept answer. */
export function statementKey(statementId: string): string {
  return `${STATEMENTS_PREFIX}${statementId}.json`;
}

/** The key of one chunk (past the first) of a SQL statement's kept answer; the same lifecycle rule removes it. */
export function statementChunkKey(statementId: string, chunkIndex: number): string {
  return `${STATEMENTS_PREFIX}${statementId}/chunks/${chunkIndex}.json`;
}
