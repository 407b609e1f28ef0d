import type { DuckSession } from "../../duck/duck-session.ts";
import type { ScratchFolder } from "../../duck/scratch-folder.ts";
import { stringList } from "../../duck/sql-text.ts";
import type { ObjectStore } from "../../store/object-store.ts";
import type { Action } from "./actions.ts";
import { CorruptLogError } from "../errors.ts";
import { JsonNumber, parseExact, stringifyExact, type ExactJson } from "./exact-json.ts";
import type { CheckpointRef } from "./log-segment.ts";

/** Columns of a checkpoint row that hold actions (PROTOCOL.md "Checkpoint Schema"), in replay order. */
const CHECKPOINT_ACTIONS = ["protocol", "metaData", "txn", "domainMetadata", "remove", "add"] as const;
type CheckpointAction = (typeof CHECKPOINT_ACTIONS)[number];

/**
 * The actions stored in a checkpoint (all parts of a multi-part one), decoded by DuckDB. Each part
 * is fetched through the store into `scratch`, and DuckDB turns the rows back into the JSON shape
 * of commit lines, so that checkpoint and commit actions replay through one code path.
 *
 * One scan aggregates each kind into a single JSON text: a checkpoint holds one row per live file
 * and tombstone, and handing them to JS one value at a time costs several times DuckDB's own work
 * (a native call and a decode per string). A checkpoint is reconciled (each path once, as an add
 * or a remove), so the order of its rows carries no meaning.
 */
export async function readCheckpointActions(
  store: ObjectStore,
  checkpoint: CheckpointRef,
  duck: DuckSession,
  scratch: ScratchFolder,
): Promise<Action[]> {
  const files = await Promise.all(
    checkpoint.keys.map(async (key) => scratch.write(await store.get(key), ".parquet")),
  );
  let row;
  try {
    [row] = await duck.rows(
      // to_json(NULL) is NULL, and string_agg skips NULLs: each column holds the rows of its kind.
      `SELECT ${CHECKPOINT_ACTIONS.map((kind) => `string_agg(to_json(${kind})::VARCHAR, ',') AS ${kind}`).join(", ")} ` +
        // A checkpoint may lack a kind's column (Spark's parts have different ones); the union adds it as NULL.
        `FROM (SELECT * FROM read_parquet(${stringList(files)}, union_by_name = true) UNION ALL BY NAME ` +
        `SELECT ${CHECKPOINT_ACTIONS.map((kind) => `NULL AS ${kind}`).join(", ")} WHERE false)`,
    );
  } catch (cause) {
    throw new CorruptLogError(`checkpoint ${checkpoint.keys.join(", ")} is not readable parquet`, {
      cause,
      data: { version: checkpoint.version, keys: checkpoint.keys },
    });
  }
  const actions: Action[] = [];
  for (const kind of CHECKPOINT_ACTIONS) {
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
 * A checkpoint column value as the action a commit line would carry: null struct fields dropped (a
 * parquet column exists for every row, a JSON field only where set), empty maps restored, and
 * `stats_parsed` serialized into `stats` when the writer only wrote the struct form
 * (`delta.checkpoint.writeStatsAsJson = false`, PROTOCOL.md "Checkpoint Schema").
 */
function checkpointAction(
  kind: CheckpointAction,
  body: Record<string, unknown>,
  exact: ExactJson | undefined,
): Action {
  const fields = withoutNulls(body);
  if (kind === "add" || kind === "remove") {
    const { stats_parsed: _stats, partitionValues_parsed: _parts, ...file } = fields;
    if (kind === "add") {
      if (file.stats === undefined && exact !== undefined) file.stats = exactStatsParsed(exact);
      file.partitionValues ??= {};
    }
    return { [kind]: file } as unknown as Action;
  }
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

function withoutNulls(record: Record<string, unknown>): Record<string, unknown> {
  const kept: Record<string, unknown> = {};
  for (const key in record) if (record[key] !== null) kept[key] = record[key];
  return kept;
}
