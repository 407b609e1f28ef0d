import type { DuckSession } from "../../duck/duck-session.ts";
import type { ScratchFolder } from "../../duck/scratch-folder.ts";
import { stringList } from "../../duck/sql-text.ts";
import type { ObjectStore } from "../../store/object-store.ts";
import type { Action } from "./actions.ts";
import { CorruptLogError } from "../errors.ts";
import { JsonNumber, parseExact, stringifyExact, type ExactJson } from "./exact-json.ts";
import type { CheckpointRef } from "./log-segment.ts";

/** Columns of a checkpoint row that hold actions (PROTOCOL.md "Checkpoint Schema"). */
const CHECKPOINT_ACTIONS = ["protocol", "metaData", "txn", "add", "remove", "domainMetadata"] as const;

/**
 * The actions stored in a checkpoint (all parts of a multi-part one), decoded by DuckDB. Each part
 * is fetched through the store into `scratch`, and every row is turned back into the JSON shape of
 * a commit line with `to_json`, so that checkpoint and commit actions replay through one code path.
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
  let rows;
  try {
    rows = await duck.rows(
      `SELECT to_json(t)::VARCHAR AS j FROM read_parquet(${stringList(files)}, union_by_name = true) t`,
    );
  } catch (cause) {
    throw new CorruptLogError(`checkpoint ${checkpoint.keys.join(", ")} is not readable parquet`, {
      cause,
      data: { version: checkpoint.version, keys: checkpoint.keys },
    });
  }
  const actions: Action[] = [];
  for (const row of rows) {
    const text = String(row.j);
    const record = JSON.parse(text) as Record<string, unknown>;
    for (const kind of CHECKPOINT_ACTIONS) {
      const body = record[kind];
      if (body && typeof body === "object")
        actions.push(checkpointAction(kind, body as Record<string, unknown>, text));
    }
  }
  return actions;
}

/**
 * One checkpoint column value as the action a commit line would carry: null struct fields dropped
 * (a parquet column exists for every row, a JSON field only where set), empty maps restored, and
 * `stats_parsed` serialized into `stats` when the writer only wrote the struct form
 * (`delta.checkpoint.writeStatsAsJson = false`, PROTOCOL.md "Checkpoint Schema").
 */
function checkpointAction(
  kind: (typeof CHECKPOINT_ACTIONS)[number],
  body: Record<string, unknown>,
  rowText: string,
): Action {
  const fields = withoutNulls(body);
  if (kind === "add") {
    const { stats_parsed: statsParsed, partitionValues_parsed: _parsedPartitions, ...add } = fields;
    if (add.stats === undefined && statsParsed && typeof statsParsed === "object") {
      add.stats = exactStatsParsed(rowText);
    }
    add.partitionValues ??= {};
    return { add } as unknown as Action;
  }
  if (kind === "remove") {
    const { stats_parsed: _stats, partitionValues_parsed: _parts, ...remove } = fields;
    return { remove } as unknown as Action;
  }
  if (kind === "metaData") {
    const format = (fields.format ?? { provider: "parquet" }) as Record<string, unknown>;
    fields.format = { ...format, options: format.options ?? {} };
    fields.configuration ??= {};
    fields.partitionColumns ??= [];
  }
  return { [kind]: fields } as unknown as Action;
}

/** `add.stats_parsed` of a checkpoint row as stats JSON, re-read so its bounds keep every digit. */
function exactStatsParsed(rowText: string): string {
  const row = parseExact(rowText) as { readonly add: { readonly stats_parsed: ExactJson } };
  return stringifyExact(withoutNullsDeep(row.add.stats_parsed));
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
  return Object.fromEntries(Object.entries(record).filter(([, value]) => value !== null));
}
