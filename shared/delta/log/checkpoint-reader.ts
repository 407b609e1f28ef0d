import type { DuckSession } from "../../duck/duck-session.ts";
import type { ScratchFolder } from "../../duck/scratch-folder.ts";
import { stringList } from "../../duck/sql-text.ts";
import type { ObjectStore } from "../../object-store/object-store.ts";
import type { Action, RemoveFile } from "./actions.ts";
import { CorruptLogError } from "../errors.ts";
import { JsonNumber, parseExact, stringifyExact, type ExactJson } from "./exact-json.ts";
import type { CheckpointRef } from "./log-segment.ts";

/** Columns of a checkpoint row that hold actions (PROTOCOL.md "Checkpoint Schema"). */
const CHECKPOINT_COLUMNS = ["protocol", "metaData", "txn", "domainMetadata", "remove", "add"] as const;
type CheckpointAction = (typeof CHECKPOINT_COLUMNS)[number];
/** What a snapshot is made of, in replay order: every kind but the tombstones, read apart. */
const CHECKPOINT_ACTIONS = ["protocol", "metaData", "txn", "domainMetadata", "add"] as const;

/** A checkpoint's parts (one for a classic checkpoint) as fetched, in part order. */
export interface CheckpointParts {
  readonly checkpoint: CheckpointRef;
  readonly bytes: readonly Uint8Array[];
}

export async function fetchCheckpoint(
  store: ObjectStore,
  checkpoint: CheckpointRef,
): Promise<CheckpointParts> {
  return { checkpoint, bytes: await Promise.all(checkpoint.keys.map((key) => store.get(key))) };
}

/**
 * The actions stored in a checkpoint (all parts of a multi-part one) but its tombstones (read by
 * `readCheckpointTombstones` when needed), decoded by DuckDB into the JSON shape of commit lines, so
 * that checkpoint and commit actions replay through one code path. DuckDB reads the parts from
 * `scratch`.
 *
 * One scan aggregates each kind into a single text: a checkpoint holds one row per live file, and
 * handing them to JS one value at a time costs several times DuckDB's own work (a native call and a
 * decode per string). A checkpoint is reconciled (each path once, as an add or a remove), so the
 * order of its rows carries no meaning.
 */
export async function readCheckpointActions(
  parts: CheckpointParts,
  duck: DuckSession,
  scratch: ScratchFolder,
): Promise<Action[]> {
  const { checkpoint } = parts;
  const from = await checkpointRows(parts, scratch);
  const select = (adds: readonly string[]) =>
    `SELECT ${[...CHECKPOINT_ACTIONS.filter((kind) => kind !== "add").map(jsonOfKind), ...adds].join(", ")} ${from}`;
  // Adds without a `stats` field (or no add column) fail the first form, stats that are not JSON text
  // do not split (`addsApart`): the second form reads those checkpoints.
  const apart = await duck.rows(select(ADDS_WITH_STATS_APART)).then(
    ([row]) => row,
    () => undefined,
  );
  const adds = apart && addsApart(apart["add"], Number(apart["add_count"]));
  const row =
    adds && apart
      ? apart
      : (
          await duck.rows(select([jsonOfKind("add")])).catch((cause: unknown) => {
            throw unreadable(checkpoint, cause);
          })
        )[0];
  const actions: Action[] = [];
  for (const kind of CHECKPOINT_ACTIONS) {
    if (kind === "add" && adds) {
      for (const add of adds) actions.push(checkpointAction(kind, add.body, add.exact, add.stats));
      continue;
    }
    const joined = row?.[kind];
    if (joined === null || joined === undefined) continue;
    const text = `[${String(joined)}]`;
    const bodies = JSON.parse(text) as Record<string, unknown>[];
    // Bounds in `stats_parsed` may not survive JSON.parse; the rare writer that stores only them is read exactly.
    const exact =
      kind === "add" && bodies.some((add) => add.stats == null && add.stats_parsed != null)
        ? (parseExact(text) as ExactJson[])
        : undefined;
    bodies.forEach((body, i) => actions.push(checkpointAction(kind, body, exact?.[i])));
  }
  return actions;
}

/**
 * The tombstones (`remove` actions) stored in a checkpoint: apart from the rest, since only
 * checkpoints and VACUUM need them, and on a compacted table they are most of the rows.
 */
export async function readCheckpointTombstones(
  parts: CheckpointParts,
  duck: DuckSession,
  scratch: ScratchFolder,
): Promise<RemoveFile[]> {
  const from = await checkpointRows(parts, scratch);
  const [row] = await duck.rows(`SELECT ${jsonOfKind("remove")} ${from}`).catch((cause: unknown) => {
    throw unreadable(parts.checkpoint, cause);
  });
  const joined = row?.["remove"];
  if (joined === null || joined === undefined) return [];
  return (JSON.parse(`[${String(joined)}]`) as Record<string, unknown>[]).map(
    (body) => withoutNulls(body, FILE_STRUCT_FORMS) as unknown as RemoveFile,
  );
}

/** The FROM clause of a checkpoint's rows, its parts written to `scratch` for DuckDB. */
async function checkpointRows(parts: CheckpointParts, scratch: ScratchFolder): Promise<string> {
  const files = await Promise.all(parts.bytes.map((bytes) => scratch.write(bytes, ".parquet")));
  return (
    `FROM (SELECT * FROM read_parquet(${stringList(files)}, union_by_name = true) UNION ALL BY NAME ` +
    // A checkpoint may lack a kind's column (Spark's parts have different ones); the union adds it as NULL.
    `SELECT ${CHECKPOINT_COLUMNS.map((kind) => `NULL AS ${kind}`).join(", ")} WHERE false)`
  );
}

function unreadable(checkpoint: CheckpointRef, cause: unknown): CorruptLogError {
  return new CorruptLogError(`checkpoint ${checkpoint.keys.join(", ")} is not readable parquet`, {
    cause,
    data: { version: checkpoint.version, keys: checkpoint.keys },
  });
}

/**
 * A kind's rows as one text of JSON objects (string_agg skips NULLs). Each row holds one kind: CASE
 * runs to_json on that kind's rows alone, where to_json(NULL) would still cost for every other row.
 */
function jsonOfKind(kind: CheckpointAction): string {
  return `string_agg(CASE WHEN ${kind} IS NOT NULL THEN to_json(${kind})::VARCHAR END, ',') AS ${kind}`;
}

/**
 * The adds as pairs `<add without stats as JSON> \x01 [\x02<stats>]`, joined by \x01. JSON.parse of
 * the stats as an escaped string inside the add costs twice the rest of the add; apart, they are
 * taken as they are. Valid JSON never holds a raw \x01, so a count off from the adds' means some
 * stats text is not JSON: such a checkpoint is read in the generic form.
 */
const ADDS_WITH_STATS_APART = [
  `string_agg(CASE WHEN add IS NOT NULL THEN ` +
    `to_json(struct_update(add, stats := NULL))::VARCHAR || chr(1) || coalesce(chr(2) || add.stats, '') END, chr(1)) AS add`,
  `count(add) AS add_count`,
];

function addsApart(
  joined: unknown,
  count: number,
): { body: Record<string, unknown>; exact: ExactJson | undefined; stats: string | undefined }[] | undefined {
  if (joined === null || joined === undefined) return count === 0 ? [] : undefined;
  const parts = String(joined).split("\x01");
  if (parts.length !== 2 * count) return undefined;
  const adds = [];
  for (let i = 0; i < parts.length; i += 2) {
    const text = parts[i]!;
    const stats = parts[i + 1] === "" ? undefined : parts[i + 1]!.slice(1);
    const body = JSON.parse(text) as Record<string, unknown>;
    // Bounds in `stats_parsed` may not survive JSON.parse; the rare writer that stores only them is read exactly.
    const exact = stats === undefined && body.stats_parsed != null ? parseExact(text) : undefined;
    adds.push({ body, exact, stats });
  }
  return adds;
}

/**
 * A checkpoint column value as the action a commit line would carry: null struct fields dropped (a
 * parquet column exists for every row, a JSON field only where set), empty maps restored, and
 * `stats_parsed` serialized into `stats` when the writer only wrote the struct form
 * (`delta.checkpoint.writeStatsAsJson = false`, PROTOCOL.md "Checkpoint Schema").
 */
function checkpointAction(
  kind: CheckpointAction,
  body: Record<string, unknown>,
  exact: ExactJson | undefined,
  stats?: string,
): Action {
  if (kind === "add" || kind === "remove") {
    const file = withoutNulls(body, FILE_STRUCT_FORMS);
    if (kind === "add") {
      if (stats !== undefined) file.stats = stats;
      else if (file.stats === undefined && exact !== undefined) file.stats = exactStatsParsed(exact);
      file.partitionValues ??= {};
    }
    return { [kind]: file } as unknown as Action;
  }
  const fields = withoutNulls(body);
  if (kind === "metaData") {
    const format = (fields.format ?? { provider: "parquet" }) as Record<string, unknown>;
    fields.format = { ...format, options: format.options ?? {} };
    fields.configuration ??= {};
    fields.partitionColumns ??= [];
  }
  return { [kind]: fields } as unknown as Action;
}

/** `add.stats_parsed` of a checkpoint row as stats JSON, from its exact parse so its bounds keep every digit. */
function exactStatsParsed(add: ExactJson): string {
  return stringifyExact(withoutNullsDeep((add as { readonly stats_parsed: ExactJson }).stats_parsed));
}

function withoutNullsDeep(value: ExactJson): ExactJson {
  if (value === null || typeof value !== "object" || Array.isArray(value) || value instanceof JsonNumber) {
    return value;
  }
  return Object.fromEntries(
    Object.entries(value as Record<string, ExactJson>)
      .filter(([, item]) => item !== null)
      .map(([key, item]) => [key, withoutNullsDeep(item)]),
  );
}

/** Checkpoint-only struct forms of a file action's fields; the action itself carries the JSON forms. */
const FILE_STRUCT_FORMS: ReadonlySet<string> = new Set(["stats_parsed", "partitionValues_parsed"]);
const NOTHING_DROPPED: ReadonlySet<string> = new Set();

/** `record` without its null fields and those named in `dropped`, in one pass (a checkpoint has one per file). */
function withoutNulls(
  record: Record<string, unknown>,
  dropped: ReadonlySet<string> = NOTHING_DROPPED,
): Record<string, unknown> {
  const kept: Record<string, unknown> = {};
  for (const key in record) if (record[key] !== null && !dropped.has(key)) kept[key] = record[key];
  return kept;
}
