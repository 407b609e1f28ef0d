import { randomUUID } from "node:crypto";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { DuckSession } from "../../../shared/duck/duck-session.ts";
import { quoteIdentifier, quoteLiteral } from "../../../shared/duck/sql-text.ts";
import { listAll, type ObjectStore } from "../../../shared/object-store/object-store.ts";
import type { CheckpointContent } from "./checkpoint-rules.ts";
import { validateLog } from "./validate-log.ts";
import type { Violation } from "./violations.ts";

/**
 * The validator's I/O: finds the Delta tables in an object store, reads each one's log (commits as
 * text; classic checkpoints decoded by DuckDB as plain parquet) and hands it to `validateLog`.
 */

const LOG = "_delta_log/";

/** The roots (prefixes ending in `/`, or "") of every table with a `_delta_log/` under `prefix`. */
export async function findTables(store: ObjectStore, prefix = ""): Promise<string[]> {
  const roots = new Set<string>();
  for await (const object of listAll(store, prefix)) {
    const at = object.key.indexOf(LOG);
    if (at >= 0 && (at === 0 || object.key[at - 1] === "/")) roots.add(object.key.slice(0, at));
  }
  return [...roots].sort();
}

export interface TableViolations {
  readonly table: string;
  readonly violations: readonly Violation[];
}

/** Validates every table under `prefix`; a table's log vanishing mid-read (a test dropping it) is skipped. */
export async function validateTables(store: ObjectStore, prefix = ""): Promise<TableViolations[]> {
  const out: TableViolations[] = [];
  const tables = await findTables(store, prefix);
  if (tables.length === 0) return out;
  const decoder = new CheckpointDecoder();
  try {
    for (const table of tables) {
      const violations = await validateTable(store, table, decoder).catch((error: unknown) => {
        if ((error as Error).name === "ObjectNotFoundError") return [];
        throw error;
      });
      if (violations.length > 0) out.push({ table, violations });
    }
  } finally {
    await decoder.close();
  }
  return out;
}

async function validateTable(
  store: ObjectStore,
  root: string,
  decoder: CheckpointDecoder,
): Promise<Violation[]> {
  const names: string[] = [];
  const commits = new Map<number, string>();
  const checkpoints = new Map<number, CheckpointContent>();
  let lastCheckpoint: string | undefined;
  const text = async (key: string) => new TextDecoder().decode(await store.get(key));
  for await (const object of listAll(store, root + LOG)) {
    const name = object.key.slice(root.length + LOG.length);
    names.push(name);
    if (/^\d{20}\.json$/.test(name)) commits.set(Number(name.slice(0, 20)), await text(object.key));
    else if (/^\d{20}\.checkpoint\.parquet$/.test(name)) {
      const version = Number(name.slice(0, 20));
      checkpoints.set(version, await decoder.decode(version, await store.get(object.key)));
    } else if (name === "_last_checkpoint") lastCheckpoint = await text(object.key);
  }
  return validateLog({
    names,
    commits,
    checkpoints,
    ...(lastCheckpoint === undefined ? {} : { lastCheckpoint }),
  });
}

/** Decodes classic checkpoints with one DuckDB session, started on the first one. */
class CheckpointDecoder {
  #session: DuckSession | undefined;
  #dir: string | undefined;

  async decode(version: number, bytes: Uint8Array): Promise<CheckpointContent> {
    this.#session ??= DuckSession.deferred();
    this.#dir ??= await mkdtemp(path.join(tmpdir(), "ebb-protocol-check-"));
    const file = path.join(this.#dir, `${randomUUID()}.parquet`);
    await writeFile(file, bytes);
    try {
      const source = `read_parquet(${quoteLiteral(file)})`;
      const described = await this.#session.rows(`DESCRIBE SELECT * FROM ${source}`);
      const columns = new Map<string, string[]>();
      for (const row of described)
        columns.set(String(row.column_name), structFieldNames(String(row.column_type)));
      const kinds = [...columns.keys()];
      const select = kinds
        .map((k) => `to_json(${quoteIdentifier(k)})::VARCHAR AS ${quoteIdentifier(k)}`)
        .join(", ");
      const rows: CheckpointContent["rows"][number][] = [];
      for (const row of await this.#session.rows(`SELECT ${select} FROM ${source}`)) {
        for (const kind of kinds) {
          const value = row[kind];
          if (value === null || value === undefined) continue;
          rows.push({ kind, action: dropNulls(JSON.parse(String(value))) as Record<string, unknown> });
        }
      }
      return { version, columns, rows, sizeInBytes: bytes.byteLength };
    } finally {
      await rm(file, { force: true });
    }
  }

  async close(): Promise<void> {
    this.#session?.close();
    if (this.#dir) await rm(this.#dir, { recursive: true, force: true });
  }
}

/** The field names of a DuckDB `STRUCT(a T, "b c" U, ...)` type; none for other types. */
export function structFieldNames(type: string): string[] {
  if (!type.startsWith("STRUCT(") || !type.endsWith(")")) return [];
  const inner = type.slice("STRUCT(".length, -1);
  const names: string[] = [];
  let depth = 0;
  let start = 0;
  let quoted = false;
  for (let i = 0; i <= inner.length; i++) {
    const c = inner[i];
    if (c === '"') quoted = !quoted;
    if (quoted) continue;
    if (c === "(" || c === "[") depth++;
    else if (c === ")" || c === "]") depth--;
    else if ((c === "," && depth === 0) || i === inner.length) {
      const part = inner.slice(start, i).trim();
      const name = part.startsWith('"') ? part.slice(1, part.indexOf('"', 1)) : part.split(" ")[0]!;
      names.push(name.replace(/""/g, '"'));
      start = i + 1;
    }
  }
  return names;
}

function dropNulls(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(dropNulls);
  if (typeof value !== "object" || value === null) return value;
  return Object.fromEntries(
    Object.entries(value)
      .filter(([, v]) => v !== null)
      .map(([k, v]) => [k, dropNulls(v)]),
  );
}
