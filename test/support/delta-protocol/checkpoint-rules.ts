import type { TableState } from "./commit-rules.ts";
import type { Findings } from "./violations.ts";

/**
 * A classic checkpoint against the table state replayed up to its version (PROTOCOL.md
 * "Checkpoints", "Checkpoint Schema"), and `_last_checkpoint` against the checkpoint it names ("Last
 * Checkpoint File Schema").
 */

export interface CheckpointContent {
  readonly version: number;
  /** Top-level columns, each with its struct's field names. */
  readonly columns: ReadonlyMap<string, readonly string[]>;
  /** One entry per row: the action kind and its value (null columns dropped). */
  readonly rows: readonly { readonly kind: string; readonly action: Record<string, unknown> }[];
  readonly sizeInBytes: number;
}

const REQUIRED_COLUMNS: Readonly<Record<string, readonly string[]>> = {
  protocol: ["minReaderVersion", "minWriterVersion"],
  metaData: ["id", "format", "schemaString", "partitionColumns", "configuration"],
  add: ["path", "partitionValues", "size", "modificationTime", "dataChange"],
  remove: ["path", "deletionTimestamp", "dataChange"],
};

/** `state` is the replay of every commit up to the checkpoint, or undefined when they are gone. */
export function checkCheckpoint(
  checkpoint: CheckpointContent,
  state: TableState | undefined,
  findings: Findings,
): void {
  const { version } = checkpoint;
  const add = (rule: "checkpoint.schema" | "checkpoint.content", message: string) =>
    findings.add(rule, message, version);
  for (const [column, fields] of Object.entries(REQUIRED_COLUMNS)) {
    const present = checkpoint.columns.get(column);
    if (!present) add("checkpoint.schema", `no ${column} column`);
    else
      for (const field of fields)
        if (!present.includes(field)) add("checkpoint.schema", `${column} has no ${field}`);
  }
  for (const forbidden of ["commitInfo", "cdc"]) {
    if (checkpoint.columns.has(forbidden))
      add("checkpoint.schema", `a checkpoint must not hold ${forbidden}`);
  }
  const removeFields = checkpoint.columns.get("remove") ?? [];
  for (const field of ["stats", "tags"])
    if (removeFields.includes(field))
      add("checkpoint.schema", `remove must not carry ${field} in a checkpoint`);

  const protocolRows = checkpoint.rows.filter((r) => r.kind === "protocol");
  const metadataRows = checkpoint.rows.filter((r) => r.kind === "metaData");
  if (protocolRows.length !== 1) add("checkpoint.content", `${protocolRows.length} protocol rows, not 1`);
  if (metadataRows.length !== 1) add("checkpoint.content", `${metadataRows.length} metaData rows, not 1`);
  const metaData = metadataRows[0]?.action ?? state?.metaData;
  const configuration = (metaData?.configuration ?? {}) as Record<string, string>;
  const partitioned = ((metaData?.partitionColumns as unknown[] | undefined) ?? []).length > 0;
  const addFields = checkpoint.columns.get("add") ?? [];
  const adds = checkpoint.rows.filter((r) => r.kind === "add");
  const anyStats =
    adds.some((r) => typeof r.action.stats === "string") ||
    [...(state?.files.values() ?? [])].some((a) => typeof a.stats === "string");
  const asJson = configuration["delta.checkpoint.writeStatsAsJson"]?.toLowerCase() !== "false";
  const asStruct = configuration["delta.checkpoint.writeStatsAsStruct"]?.toLowerCase() === "true";
  if (asJson && anyStats && !adds.some((r) => typeof r.action.stats === "string"))
    add("checkpoint.schema", "add.stats is missing though delta.checkpoint.writeStatsAsJson is on");
  if (!asJson && addFields.includes("stats"))
    add("checkpoint.schema", "add.stats is written though delta.checkpoint.writeStatsAsJson is false");
  if (asStruct && anyStats && !addFields.includes("stats_parsed"))
    add(
      "checkpoint.schema",
      "add.stats_parsed is missing though delta.checkpoint.writeStatsAsStruct is true",
    );
  if (asStruct && partitioned && !addFields.includes("partitionValues_parsed"))
    add(
      "checkpoint.schema",
      "add.partitionValues_parsed is missing though delta.checkpoint.writeStatsAsStruct is true",
    );
  if (!asStruct && addFields.includes("stats_parsed"))
    add("checkpoint.schema", "add.stats_parsed is written though delta.checkpoint.writeStatsAsStruct is off");
  for (const row of adds)
    if (row.action.dataChange !== false)
      add("checkpoint.content", `add ${String(row.action.path)} has dataChange true`);

  if (!state) return;
  const protocol = protocolRows[0]?.action;
  if (protocol && state.protocol) {
    for (const key of ["minReaderVersion", "minWriterVersion", "readerFeatures", "writerFeatures"] as const) {
      const [got, want] = [norm(protocol[key]), norm(state.protocol[key])];
      if (got !== want) add("checkpoint.content", `protocol.${key} is ${got}, the log says ${want}`);
    }
  }
  const meta = metadataRows[0]?.action;
  if (meta && state.metaData) {
    for (const key of ["id", "schemaString", "partitionColumns", "configuration"]) {
      const [got, want] = [norm(meta[key]), norm(state.metaData[key])];
      if (got !== want) add("checkpoint.content", `metaData.${key} differs from the log's`);
    }
  }
  const paths = new Set(adds.map((r) => String(r.action.path)));
  for (const path of state.files.keys())
    if (!paths.has(path)) add("checkpoint.content", `live file ${path} is missing`);
  for (const path of paths)
    if (!state.files.has(path)) add("checkpoint.content", `add ${path} is not a live file`);
  for (const row of adds) {
    const live = state.files.get(String(row.action.path));
    if (live && asJson && norm(live.stats ?? null) !== norm(row.action.stats ?? null))
      add("checkpoint.content", `add ${String(row.action.path)}: stats differ from the log's`);
  }
  const txns = checkpoint.rows.filter((r) => r.kind === "txn");
  for (const [appId, txn] of state.txns) {
    const row = txns.find((r) => r.action.appId === appId);
    if (!row || Number(row.action.version) !== Number(txn.version))
      add("checkpoint.content", `txn ${appId} is missing or at another version`);
  }
  const domains = checkpoint.rows.filter((r) => r.kind === "domainMetadata");
  if (domains.length !== state.domains.size)
    add(
      "checkpoint.content",
      `${domains.length} domainMetadata rows, the log has ${state.domains.size} live domains`,
    );
}

/** `_last_checkpoint`'s text against the checkpoint it names (undefined when that file is absent). */
export function checkLastCheckpoint(
  text: string,
  checkpoint: CheckpointContent | undefined,
  findings: Findings,
): void {
  const add = (message: string) => findings.add("lastCheckpoint", message);
  let last: Record<string, unknown>;
  try {
    last = JSON.parse(text) as Record<string, unknown>;
  } catch {
    return add("_last_checkpoint is not JSON");
  }
  if (!Number.isSafeInteger(last.version) || (last.version as number) < 0)
    return add("version is not a non-negative whole number");
  if (!Number.isSafeInteger(last.size)) add("size is not a whole number");
  for (const key of ["parts", "sizeInBytes", "numOfAddFiles"]) {
    if (last[key] !== undefined && !Number.isSafeInteger(last[key])) add(`${key} is not a whole number`);
  }
  if (last.tags !== undefined && (typeof last.tags !== "object" || last.tags === null))
    add("tags is not a map");
  if (!checkpoint) return add(`names checkpoint ${String(last.version)}, which does not exist`);
  if (last.size !== checkpoint.rows.length)
    add(`size ${String(last.size)}, the checkpoint has ${checkpoint.rows.length} actions`);
  if (last.sizeInBytes !== undefined && last.sizeInBytes !== checkpoint.sizeInBytes)
    add(`sizeInBytes ${String(last.sizeInBytes)}, the file has ${checkpoint.sizeInBytes}`);
  const addFiles = checkpoint.rows.filter((r) => r.kind === "add").length;
  if (last.numOfAddFiles !== undefined && last.numOfAddFiles !== addFiles)
    add(`numOfAddFiles ${String(last.numOfAddFiles)}, the checkpoint has ${addFiles}`);
}

/** Order-insensitive text of a value, for comparing an action with its checkpoint row. */
function norm(value: unknown): string {
  if (value === undefined || value === null) return "null";
  if (typeof value === "bigint") return value.toString();
  if (Array.isArray(value)) return `[${value.map(norm).join(",")}]`;
  if (typeof value === "object") {
    const entries = Object.entries(value)
      .filter(([, v]) => v !== null && v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : 1));
    return `{${entries.map(([k, v]) => `${k}:${norm(v)}`).join(",")}}`;
  }
  return JSON.stringify(value);
}
