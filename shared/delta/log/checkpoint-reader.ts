import {
  parquetMetadata,
  parquetSchema,
  type ColumnChunk,
  type FileMetaData,
  type SchemaTree,
} from "hyparquet";
import { assembleNested } from "hyparquet/src/assemble.js";
import { DEFAULT_PARSERS } from "hyparquet/src/convert.js";
import type { DecodedArray } from "hyparquet/src/types.js";
import type { ObjectStore } from "../../object-store/object-store.ts";
import type { Action, AddFile, RemoveFile } from "./actions.ts";
import { decodeLogPath } from "./data-file-paths.ts";
import type { CheckpointFiles } from "./live-files.ts";
import { CorruptLogError, DeltaError } from "../errors.ts";
import { stringifyExact, type ExactJsonInput } from "./exact-json.ts";
import type { CheckpointRef } from "./log-segment.ts";
import { assertDecodableCodecs, CHECKPOINT_COMPRESSORS } from "./parquet-codecs.ts";
import { isMapLike } from "hyparquet/src/schema.js";
import { listsAt, mapsAt, presentRows, readLeafColumn, valuesAt, type LeafColumn } from "./parquet-leaves.ts";

/** Columns of a checkpoint row that hold actions (PROTOCOL.md "Checkpoint Schema"). */
type CheckpointAction = "protocol" | "metaData" | "txn" | "domainMetadata" | "add" | "remove";
/** What a snapshot is made of but its files, in replay order (the tombstones are read apart). */
const TABLE_ACTIONS: readonly CheckpointAction[] = ["protocol", "metaData", "txn", "domainMetadata"];

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

/** What a snapshot starts from: a checkpoint's actions but its tombstones (`readCheckpointTombstones`). */
export interface CheckpointContents {
  /** Its protocol, metaData, txn and domainMetadata actions, in that order. */
  readonly actions: readonly Action[];
  /** Its adds: the paths decoded now, the actions when first asked for. */
  readonly files: CheckpointFiles;
}

/**
 * The actions stored in a checkpoint (all parts of a multi-part one) in the JSON shape of commit
 * lines, so that checkpoint and commit actions replay through one code path; of the adds, only the
 * `path` column is decoded now, the rest on the first call of `files.actions` (from the bytes kept).
 * Decoded in process by a Parquet reader (hyparquet): a checkpoint is small, and handing it to DuckDB
 * (a scratch file, a query, JSON text back) cost several times the decoding itself. A checkpoint is
 * reconciled (each path once, as an add or a remove), so the order of its rows carries no meaning;
 * the kinds come out in replay order.
 */
export function readCheckpoint(parts: CheckpointParts): CheckpointContents {
  const parsed = parsedParts(parts);
  const byKind = new Map<CheckpointAction, Action[]>(TABLE_ACTIONS.map((kind) => [kind, []]));
  for (const part of partActions(parsed, TABLE_ACTIONS, "whole")) {
    for (const [kind, found] of part.actions) {
      const actions = byKind.get(kind)!;
      for (const body of found.bodies)
        actions.push(checkpointAction(kind, body, undefined, part.decimalStats));
    }
  }
  const keys: string[] = [];
  for (const part of partActions(parsed, ["add"], "path")) {
    for (const body of part.actions.get("add")?.bodies ?? []) keys.push(decodeLogPath(body.path as string));
  }
  const actions = (): AddFile[] => {
    const adds: AddFile[] = [];
    for (const part of partActions(parsed, ["add"], "whole")) {
      const found = part.actions.get("add");
      if (!found) continue;
      for (let i = 0; i < found.bodies.length; i++) {
        const action = checkpointAction("add", found.bodies[i]!, found.statsParsed?.[i], part.decimalStats);
        adds.push((action as { add: AddFile }).add);
      }
    }
    if (adds.length !== keys.length || adds.some((add, i) => decodeLogPath(add.path) !== keys[i]))
      throw corrupt(parts.checkpoint, new Error("the add column's rows changed between two reads"));
    return adds;
  };
  return { actions: TABLE_ACTIONS.flatMap((kind) => byKind.get(kind)!), files: { keys, actions } };
}

/**
 * The tombstones (`remove` actions) stored in a checkpoint: apart from the rest, since only
 * checkpoints and VACUUM need them, and on a compacted table they are most of the rows.
 */
export function readCheckpointTombstones(parts: CheckpointParts): RemoveFile[] {
  const removes: RemoveFile[] = [];
  for (const part of partActions(parsedParts(parts), ["remove"], "whole")) {
    for (const body of part.actions.get("remove")?.bodies ?? []) removes.push(body as unknown as RemoveFile);
  }
  return removes;
}

/** The actions of one kind in a part, in row order. */
interface KindActions {
  /** Each action's fields as a commit line has them (see `plainValue`), the struct forms left out. */
  readonly bodies: readonly Record<string, unknown>[];
  /** `add.stats_parsed`, one a body, assembled only if some body has no `stats` to stand in for. */
  readonly statsParsed: readonly unknown[] | undefined;
}

interface PartActions {
  /** The actions of each action column the part has. */
  readonly actions: ReadonlyMap<CheckpointAction, KindActions>;
  /** `add.stats_parsed` bounds stored as DECIMAL (as `minValues.price`): see `exactStatsParsed`. */
  readonly decimalStats: ReadonlySet<string>;
}

/** A part's bytes with its footer read: parsed once, read for each kind as asked. */
interface ParsedPart {
  readonly checkpoint: CheckpointRef;
  readonly key: string;
  readonly file: ArrayBuffer;
  readonly metadata: FileMetaData;
  readonly tree: SchemaTree;
}

/** Each part's footer and schema. */
function parsedParts(parts: CheckpointParts): ParsedPart[] {
  const { checkpoint } = parts;
  return parts.bytes.map((bytes, i) => {
    const key = checkpoint.keys[i] ?? checkpoint.keys[0]!;
    try {
      // The reader wants an ArrayBuffer of the file alone; a Buffer may be a view into a larger pool.
      const file =
        bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength
          ? (bytes.buffer as ArrayBuffer)
          : (bytes.slice().buffer as ArrayBuffer);
      const metadata = parquetMetadata(file, { geoparquet: false });
      return { checkpoint, key, file, metadata, tree: parquetSchema(metadata) };
    } catch (cause) {
      throw corrupt(checkpoint, cause);
    }
  });
}

/**
 * The actions of each part, of those of `kinds` the part has (Spark's parts have different
 * columns): `whole`, or only their `path` field.
 */
function partActions(
  parts: readonly ParsedPart[],
  kinds: readonly CheckpointAction[],
  fields: "whole" | "path",
): PartActions[] {
  return parts.map(({ checkpoint, key, file, metadata, tree }) => {
    try {
      const columns = kinds.filter((kind) => tree.children.some((child) => child.element.name === kind));
      if (columns.length === 0) return { actions: new Map(), decimalStats: new Set<string>() };
      assertDecodableCodecs(codecsOf(metadata, columns), key);
      return {
        actions: presentActions(file, metadata, tree, columns, fields),
        decimalStats: decimalStatsOf(tree.children),
      };
    } catch (cause) {
      if (cause instanceof DeltaError) throw cause;
      throw corrupt(checkpoint, cause);
    }
  });
}

function corrupt(checkpoint: CheckpointRef, cause: unknown): CorruptLogError {
  return new CorruptLogError(`checkpoint ${checkpoint.keys.join(", ")} is not readable parquet`, {
    cause,
    data: { version: checkpoint.version, keys: checkpoint.keys },
  });
}

/**
 * The non-null values of the struct columns `columns`, built only for the rows that hold them: a
 * checkpoint row holds one action, and protocol / metaData / txn are null in all rows but a few.
 * Each kind's rows are found from the levels of one of its leaves; each field is then read off its
 * leaf at those rows alone (a map, a list or a struct assembled by hyparquet from those rows of its
 * leaves), and each action built once, in its final shape. Leaves not needed are not decoded:
 * `remove`'s unless asked for, `partitionValues_parsed` never, `stats_parsed` only where some add
 * has no `stats` JSON to stand in for.
 */
function presentActions(
  file: ArrayBuffer,
  metadata: FileMetaData,
  tree: SchemaTree,
  columns: readonly CheckpointAction[],
  fields: "whole" | "path",
): Map<CheckpointAction, KindActions> {
  const found = new Map<CheckpointAction, { bodies: Record<string, unknown>[]; statsParsed: unknown[] }>(
    columns.map((kind) => [kind, { bodies: [], statsParsed: [] }]),
  );
  for (const group of metadata.row_groups) {
    const chunks = new Map<string, ColumnChunk>();
    for (const chunk of group.columns)
      if (chunk.meta_data) chunks.set(chunk.meta_data.path_in_schema.join("."), chunk);
    const leaf = (path: string): LeafColumn => {
      const chunk = chunks.get(path);
      if (!chunk) throw new CorruptLogError(`parquet column ${path} not in the row group`);
      return readLeafColumn(file, tree, chunk, LEAF_OPTIONS);
    };
    const leavesUnder = (node: SchemaTree): string[] => {
      const at = `${node.path.join(".")}.`;
      return [...chunks.keys()].filter((path) => path.startsWith(at));
    };
    for (const kind of columns) {
      const schema = tree.children.find((child) => child.element.name === kind)!;
      const first = leavesUnder(schema)[0];
      if (first === undefined || schema.element.repetition_type !== "OPTIONAL")
        throw new CorruptLogError(`parquet column ${kind} is not an optional struct`);
      const rows = presentRows(leaf(first), Number(group.num_rows));
      if (rows.count === 0) continue;
      const fileKind = kind === "add" || kind === "remove";
      // A field's value at each present row: a plain one off its leaf; a map straight off its two
      // leaves; another nested one (a list, a struct) assembled by hyparquet from its leaves, cut to
      // the present rows. `plain` when the values already have a commit line's shape.
      const valuesOf = (child: SchemaTree): { values: ArrayLike<unknown>; plain: boolean } => {
        if (child.children.length === 0) {
          const values = valuesAt(leaf(child.path.join(".")), rows);
          if (values) return { values, plain: false };
        }
        const maps = isMapLike(child) && stringMapsAt(child);
        if (maps) return { values: maps, plain: true };
        const nested = new Map<string, DecodedArray>();
        for (const path of child.children.length === 0 ? [child.path.join(".")] : leavesUnder(child))
          nested.set(path, listsAt(leaf(path), rows));
        assembleNested(nested, child, PARSERS, 1);
        const lists = nested.get(child.path.join("."));
        if (!lists) throw new CorruptLogError(`parquet column ${child.path.join(".")} not assembled`);
        return { values: Array.from(lists, (list) => (list as readonly unknown[])[0]), plain: false };
      };
      // A map of strings to strings (Delta's maps: partitionValues, tags, configuration) off its leaves.
      const stringMapsAt = (map: SchemaTree): unknown[] | undefined => {
        const entry = map.children[0]!.children;
        const [keys, values] = ["key", "value"].map((name) => entry.find((c) => c.element.name === name));
        if (!keys || !values || ![keys, values].every(isString)) return undefined;
        return mapsAt(leaf(keys.path.join(".")), leaf(values.path.join(".")), rows);
      };
      const into = found.get(kind)!;
      const start = into.bodies.length;
      for (let i = 0; i < rows.count; i++) into.bodies.push({});
      for (const child of schema.children) {
        if (fileKind && FILE_STRUCT_FORMS.has(child.element.name)) continue;
        if (fields === "path" && child.element.name !== "path") continue;
        const { values, plain } = valuesOf(child);
        for (let i = 0; i < rows.count; i++) {
          const value = values[i];
          if (value != null) into.bodies[start + i]![child.element.name] = plain ? value : plainValue(value);
        }
      }
      // `stats_parsed` stands in for `stats` only where a writer left the JSON form out.
      const statsField =
        kind === "add" &&
        fields === "whole" &&
        schema.children.find((child) => child.element.name === "stats_parsed");
      const needsStats = into.bodies.some((body, i) => i >= start && body.stats === undefined);
      if (statsField && needsStats) {
        const { values } = valuesOf(statsField);
        for (let i = 0; i < rows.count; i++) into.statsParsed[start + i] = values[i];
      }
    }
  }
  return found;
}

function isString(node: SchemaTree): boolean {
  return node.element.converted_type === "UTF8" || node.element.logical_type?.type === "STRING";
}

function codecsOf(metadata: FileMetaData, columns: readonly string[]): Set<string> {
  const codecs = new Set<string>();
  for (const group of metadata.row_groups) {
    for (const chunk of group.columns) {
      const top = chunk.meta_data?.path_in_schema[0];
      if (chunk.meta_data && top !== undefined && columns.includes(top)) codecs.add(chunk.meta_data.codec);
    }
  }
  return codecs;
}

/**
 * Timestamps and dates only occur in a checkpoint's `stats_parsed` / `partitionValues_parsed`; they
 * read as the text Delta's JSON stats hold (PROTOCOL.md "Per-file Statistics": milliseconds, UTC).
 */
const STATS_PARSERS = {
  timestampFromMilliseconds: (millis: bigint) => new Date(Number(millis)).toISOString(),
  timestampFromMicroseconds: (micros: bigint) => new Date(Number(micros / 1000n)).toISOString(),
  timestampFromNanoseconds: (nanos: bigint) => new Date(Number(nanos / 1_000_000n)).toISOString(),
  dateFromDays: (days: number) => new Date(days * 86_400_000).toISOString().slice(0, 10),
};

/** What nested assembly wants: every parser, ours over hyparquet's defaults. */
const PARSERS = { ...DEFAULT_PARSERS, ...STATS_PARSERS };
const LEAF_OPTIONS = { compressors: CHECKPOINT_COMPRESSORS, parsers: PARSERS };

/** The `minValues.x` / `maxValues.x.y` paths of `add.stats_parsed` whose Parquet type is DECIMAL. */
function decimalStatsOf(top: readonly SchemaTree[]): Set<string> {
  const found = new Set<string>();
  const statsParsed = top
    .find((child) => child.element.name === "add")
    ?.children.find((child) => child.element.name === "stats_parsed");
  const walk = (node: SchemaTree, path: string) => {
    for (const child of node.children) {
      const at = path === "" ? child.element.name : `${path}.${child.element.name}`;
      if (child.element.converted_type === "DECIMAL" || child.element.logical_type?.type === "DECIMAL")
        found.add(at);
      walk(child, at);
    }
  };
  if (statsParsed) walk(statsParsed, "");
  return found;
}

/**
 * A checkpoint column value (its fields already as a commit line has them, see `plainValue`) as
 * the action a commit line would carry: empty maps restored, and `stats_parsed` serialized into
 * `stats` when the writer only wrote the struct form (`delta.checkpoint.writeStatsAsJson = false`,
 * PROTOCOL.md "Checkpoint Schema").
 */
function checkpointAction(
  kind: CheckpointAction,
  fields: Record<string, unknown>,
  statsParsed: unknown,
  decimalStats: ReadonlySet<string>,
): Action {
  if (kind === "add") {
    if (fields.stats === undefined && statsParsed != null) {
      fields.stats = exactStatsParsed(statsParsed as Record<string, unknown>, decimalStats);
    }
    fields.partitionValues ??= {};
    return { add: fields } as unknown as Action;
  }
  if (kind === "metaData") {
    const format = (fields.format ?? { provider: "parquet" }) as Record<string, unknown>;
    fields.format = { ...format, options: format.options ?? {} };
    fields.configuration ??= {};
    fields.partitionColumns ??= [];
  }
  return { [kind]: fields } as unknown as Action;
}

/** Checkpoint-only struct forms of a file action's fields; the action itself carries the JSON forms. */
const FILE_STRUCT_FORMS: ReadonlySet<string> = new Set(["stats_parsed", "partitionValues_parsed"]);

/**
 * A field's value as JSON.parse would give it (a JSON line has no field where the column is null,
 * so null fields are left out of a body): integers as numbers (the 64-bit ones hold sizes, times
 * and versions, far below 2^53), nulls inside maps and lists kept.
 */
function plainValue(value: unknown): unknown {
  if (typeof value === "bigint") return Number(value);
  if (value === null || typeof value !== "object") return value;
  if (Array.isArray(value)) return value.map((item) => (item === undefined ? null : plainValue(item)));
  const plain: Record<string, unknown> = {};
  for (const key in value) {
    const item = (value as Record<string, unknown>)[key];
    if (item !== undefined) plain[key] = plainValue(item);
  }
  return plain;
}

/**
 * `add.stats_parsed` as stats JSON, its 64-bit bounds digit for digit (they are read as bigints).
 * DECIMAL bounds are left out: the reader hands them over as doubles, which may round them to the
 * wrong side of the values they bound; a missing bound bounds nothing (Ebb never prunes on decimals).
 */
function exactStatsParsed(statsParsed: Record<string, unknown>, decimalStats: ReadonlySet<string>): string {
  const clean = (value: unknown, path: string): ExactJsonInput => {
    if (value === null || typeof value !== "object" || Array.isArray(value)) return value as ExactJsonInput;
    const kept: Record<string, ExactJsonInput> = {};
    for (const key in value) {
      const item = (value as Record<string, unknown>)[key];
      const at = path === "" ? key : `${path}.${key}`;
      if (item == null || decimalStats.has(at)) continue;
      kept[key] = clean(item, at);
    }
    return kept;
  };
  return stringifyExact(clean(statsParsed, ""));
}
