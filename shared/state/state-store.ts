import { readdir, readFile } from "node:fs/promises";
import path from "node:path";
import type { DuckRow } from "../duck/duck-session.ts";
import { quoteIdentifier, quoteLiteral } from "../duck/sql-text.ts";
import { ObjectNotFoundError } from "../object-store/errors.ts";
import type { ObjectStore } from "../object-store/object-store.ts";
import {
  BUCKET_HASHES,
  bucketHashFor,
  bucketSql,
  LEGACY_BUCKET_HASH,
  type BucketHash,
} from "./bucket-hash.ts";
import { IncompatibleStateError, StateFormatError, StateVersionMissingError } from "./errors.ts";
import { stateDataKey, stateVersionKey, type StateFlow } from "./state-keys.ts";
import {
  bucketsOlderThan,
  DEFAULT_BUCKETS,
  EMPTY_MANIFEST,
  manifestMetrics,
  nextTable,
  partFiles,
  snapshotDue,
  STATE_FORMAT,
  stateManifestSchema,
  type BucketWrite,
  type StateManifest,
  type StateMetrics,
  type StateTableManifest,
  type TableShape,
} from "./state-manifest.ts";
import { allColumns, DELETED_COLUMN, describeSchema, sameSchema, type StateSchema } from "./state-schema.ts";

/**
 * The operator state store's I/O edge: reads a state version (a manifest) from the object store,
 * loads the rows a batch needs into the batch's DuckDB sandbox, and writes the next version.
 *
 * Reading keys: 1. the keys' buckets are computed in DuckDB; 2. only those buckets' files are
 * downloaded into the sandbox's folder; 3. their rows are filtered to the keys, then merged (last row
 * per key, deletions dropped). Writing (`writeTableChanges`): 1. the staged upserts and deletes become
 * one change table (last change per key wins); 2. per touched bucket, the changed keys looked up in
 * the parent give its exact row count, and one file sorted by key is written (a changelog, or a
 * snapshot when due); 3. the manifest is written last, so a crash before it leaves only files no
 * checkpoint names. A batch's cost follows its rows and the keys they touch, not the whole state.
 */

/** What the store needs of the batch's sandbox (`shared/engine/sandbox.ts` is one). */
export interface StateSql {
  run(sql: string): Promise<void>;
  rows(sql: string): Promise<DuckRow[]>;
  /** A fresh path in the sandbox's folder to write to. */
  newPath(extension: string): Promise<string>;
  /** Puts object `key` of `store` into the sandbox's folder (linked where the store can); its path. */
  takeObject(store: ObjectStore, key: string, extension?: string): Promise<string>;
}

export interface OpenStateRequest {
  /** The pipelines' bucket (keys `state/<pipelineId>/<flowId>/…`). */
  readonly store: ObjectStore;
  readonly flow: StateFlow;
  /** The parent checkpoint's `stateVersion`; undefined: the empty state (root, checkpoint reset). */
  readonly version?: string;
}

export interface TableOptions {
  /** @default DEFAULT_BUCKETS (fixed when the table is first written) */
  readonly buckets?: number;
  /** A TIMESTAMP column whose oldest value per bucket is kept, for `loadOlderThan`. */
  readonly timeColumn?: string;
}

const ORDER = "__ebb_order";
/** Rows per row group of a state file: small enough that a scan filtered by key skips most of one. */
const ROW_GROUP_ROWS = 16_384;
/** Keys per bucket above which a lookup reads every bucket rather than hash the keys (all are hit). */
const EVERY_BUCKET_KEYS = 64;
const BUCKET = "__ebb_bucket";

/** Reads the state version the checkpoint names (the empty state for none). */
export async function openStateVersion(request: OpenStateRequest): Promise<StateVersion> {
  if (request.version === undefined)
    return new StateVersion(request.store, request.flow, undefined, EMPTY_MANIFEST);
  const key = request.version;
  const bytes = await getOrMissing(request.store, request.flow, key);
  let json: unknown;
  try {
    json = JSON.parse(new TextDecoder().decode(bytes));
  } catch {
    throw new StateFormatError(request.flow.flowId, key, "not JSON");
  }
  const parsed = stateManifestSchema.safeParse(json);
  if (!parsed.success) {
    // A newer engine's bucket hash: said as such, so it is not taken for a damaged file.
    const hash = parsed.error.issues.find((issue) => issue.path.at(-1) === "hash");
    const table = hash?.path[1];
    throw new StateFormatError(
      request.flow.flowId,
      key,
      hash
        ? `its ${String(table)} table is bucketed by a hash this version of Ebb does not know (it knows ${BUCKET_HASHES.join(", ")})`
        : `not an ${STATE_FORMAT} manifest`,
    );
  }
  for (const [name, table] of Object.entries(parsed.data.tables)) {
    // So a table's hash can always be computed over its key (bucketSql's invariant).
    if (table.hash === "fib32" && bucketHashFor(table.schema) !== "fib32")
      throw new StateFormatError(
        request.flow.flowId,
        key,
        `its ${name} table is bucketed by fib32 over a key that is not all integers`,
      );
  }
  return new StateVersion(request.store, request.flow, key, parsed.data);
}

async function getOrMissing(store: ObjectStore, flow: StateFlow, key: string): Promise<Uint8Array> {
  try {
    return await store.get(key);
  } catch (error) {
    if (error instanceof ObjectNotFoundError)
      throw new StateVersionMissingError(flow.flowId, key, { cause: error });
    throw error;
  }
}

export class StateVersion {
  /** Downloaded files, per sandbox: object key → path in its folder. */
  readonly #local = new WeakMap<StateSql, Map<string, Promise<string>>>();

  constructor(
    private readonly store: ObjectStore,
    readonly flow: StateFlow,
    /** The manifest's key; undefined for the empty state. */
    readonly key: string | undefined,
    readonly manifest: StateManifest,
  ) {}

  get meta(): Readonly<Record<string, unknown>> {
    return this.manifest.meta;
  }

  metrics(): StateMetrics {
    return manifestMetrics(this.manifest);
  }

  /** Names of the state tables this version holds. */
  tableNames(): string[] {
    return Object.keys(this.manifest.tables);
  }

  /**
   * A state table of this version with the shape the operator needs. A stored table of another shape
   * is an `IncompatibleStateError`: reading it as this one would give wrong answers.
   */
  table(name: string, schema: StateSchema, options: TableOptions = {}): StateTable {
    const stored = this.manifest.tables[name];
    const shape: TableShape = {
      schema,
      buckets: stored?.buckets ?? options.buckets ?? DEFAULT_BUCKETS,
      // Fixed when the table is first written, like its buckets.
      hash: stored ? storedHash(stored) : bucketHashFor(schema),
      ...(options.timeColumn !== undefined ? { timeColumn: options.timeColumn } : {}),
    };
    if (stored && (!sameSchema(stored.schema, schema) || stored.timeColumn !== options.timeColumn)) {
      throw new IncompatibleStateError(
        this.flow.flowId,
        name,
        describeSchema(stored.schema),
        describeSchema(schema),
      );
    }
    return new StateTable(this, name, shape, stored);
  }

  /** The stored table as it is, whatever its shape (the state reader). */
  storedTable(name: string): StateTable | undefined {
    const stored = this.manifest.tables[name];
    if (!stored) return undefined;
    return new StateTable(
      this,
      name,
      {
        schema: stored.schema,
        buckets: stored.buckets,
        hash: storedHash(stored),
        ...(stored.timeColumn !== undefined ? { timeColumn: stored.timeColumn } : {}),
      },
      stored,
    );
  }

  writer(): StateWriter {
    return new StateWriter(this);
  }

  /** The local path of a state file in the sandbox's folder, downloading it once. */
  localFile(sql: StateSql, key: string): Promise<string> {
    let files = this.#local.get(sql);
    if (!files) this.#local.set(sql, (files = new Map()));
    let path = files.get(key);
    if (!path) {
      path = sql.takeObject(this.store, key, ".parquet").catch((error: unknown) => {
        if (error instanceof ObjectNotFoundError)
          throw new StateVersionMissingError(this.flow.flowId, key, { cause: error });
        throw error;
      });
      files.set(key, path);
      path.catch(() => files.delete(key));
    }
    return path;
  }

  /** Writes a file of the sandbox to the store under a fresh key; returns the key and size. */
  async upload(path: string, key: string): Promise<{ key: string; bytes: number }> {
    const bytes = new Uint8Array(await readFile(path));
    await this.store.put(key, bytes);
    return { key, bytes: bytes.byteLength };
  }

  async putManifest(manifest: StateManifest): Promise<string> {
    const key = stateVersionKey(this.flow, manifest.seq);
    await this.store.put(key, new TextEncoder().encode(JSON.stringify(manifest)));
    return key;
  }
}

export class StateTable {
  constructor(
    readonly version: StateVersion,
    readonly name: string,
    readonly shape: TableShape,
    readonly stored: StateTableManifest | undefined,
  ) {}

  get schema(): StateSchema {
    return this.shape.schema;
  }

  /** Live rows in this version (from the manifest). */
  get rows(): number {
    return Object.values(this.stored?.parts ?? {}).reduce((sum, part) => sum + part.rows, 0);
  }

  /** The bucket of a row, as DuckDB SQL over its key columns (the table's hash: bucket-hash.ts). */
  bucketSql(alias?: string): string {
    return bucketSql(this.shape.hash, this.schema, this.shape.buckets, alias);
  }

  /** `col type, …` of every column, for an empty table of the state's shape. */
  columnsDdl(): string {
    return allColumns(this.schema)
      .map((c) => `${quoteIdentifier(c.name)} ${c.type}`)
      .join(", ");
  }

  columnList(alias?: string): string {
    const prefix = alias ? `${quoteIdentifier(alias)}.` : "";
    return allColumns(this.schema)
      .map((c) => `${prefix}${quoteIdentifier(c.name)}`)
      .join(", ");
  }

  /** Key equality between two aliases, NULL-safe. */
  keyMatch(left: string, right: string): string {
    return this.schema.key
      .map(
        (c) =>
          `${quoteIdentifier(left)}.${quoteIdentifier(c.name)} IS NOT DISTINCT FROM ${quoteIdentifier(right)}.${quoteIdentifier(c.name)}`,
      )
      .join(" AND ");
  }

  /**
   * The raw rows of these buckets' files as one relation (every column, the deleted flag, the read
   * order and the bucket), or undefined when none of them has a file.
   */
  async rawSql(sql: StateSql, buckets: readonly number[]): Promise<string | undefined> {
    const files = buckets.flatMap((bucket) =>
      partFiles(this.stored?.parts[String(bucket)]).map((file, order) => ({ bucket, file, order })),
    );
    // Fetched together: one after another, a view's few small files cost a round trip each.
    const paths = await Promise.all(files.map(({ file }) => this.version.localFile(sql, file.key)));
    const selects = files.map(
      ({ bucket, order }, i) =>
        `SELECT ${this.columnList()}, ${quoteIdentifier(DELETED_COLUMN)}, ${order} AS ${ORDER}, ${bucket} AS ${BUCKET} FROM read_parquet(${quoteLiteral(paths[i]!)})`,
    );
    return selects.length > 0 ? selects.join("\nUNION ALL\n") : undefined;
  }

  /** Last row per key of a raw relation (with ORDER), deletions dropped; keeps the bucket column. */
  mergedSql(raw: string): string {
    const keys = this.schema.key.map((c) => quoteIdentifier(c.name)).join(", ");
    return (
      `SELECT * EXCLUDE (${quoteIdentifier(DELETED_COLUMN)}, ${ORDER}) FROM (SELECT * FROM (${raw}) ` +
      `QUALIFY row_number() OVER (PARTITION BY ${keys} ORDER BY ${ORDER} DESC) = 1) WHERE NOT ${quoteIdentifier(DELETED_COLUMN)}`
    );
  }

  /** Creates temp table `into` with the state's columns and the rows of `merged` (if any). */
  private async materialize(
    sql: StateSql,
    into: string,
    merged: string | undefined,
    where = "TRUE",
  ): Promise<void> {
    const target = quoteIdentifier(into);
    const create = `CREATE OR REPLACE TEMP TABLE ${target} (${this.columnsDdl()})`;
    // One call for both statements: a round trip into DuckDB is most of what a small one costs.
    await sql.run(
      merged
        ? `${create};\nINSERT INTO ${target} SELECT ${this.columnList("m")} FROM (${merged}) m WHERE ${where}`
        : create,
    );
  }

  private storedBuckets(buckets: Iterable<number>): number[] {
    return [...buckets].filter((b) => this.stored?.parts[String(b)] !== undefined).sort((a, b) => a - b);
  }

  /**
   * Temp table `into` with the current rows whose key is among `keysSql`'s rows (a SELECT of exactly
   * the key columns, by name). Only the buckets of those keys are read.
   */
  async loadKeys(
    sql: StateSql,
    keysSql: string,
    into: string,
    /** `distinct`: `keysSql` gives each key once already (no pass to drop repeats). */
    options: { readonly distinct?: boolean } = {},
  ): Promise<void> {
    const keysTable = `${into}__keys`;
    const keyCols = this.schema.key.map((c) => quoteIdentifier(c.name)).join(", ");
    let keys = `SELECT ${keyCols} FROM (${keysSql})`;
    if (!options.distinct) {
      await sql.run(
        `CREATE OR REPLACE TEMP TABLE ${quoteIdentifier(keysTable)} AS SELECT DISTINCT ${keyCols} FROM (${keysSql})`,
      );
      keys = `SELECT * FROM ${quoteIdentifier(keysTable)}`;
    }
    const [count] = await sql.rows(`SELECT count(*)::BIGINT AS n FROM (${keys})`);
    let raw: string | undefined;
    if (Number(count?.["n"] ?? 0) > EVERY_BUCKET_KEYS * this.shape.buckets) {
      // So many keys reach every bucket anyway: hashing them, or copying them to note a bucket, would
      // only cost time.
      raw = await this.rawSql(sql, this.storedBuckets(Object.keys(this.stored?.parts ?? {}).map(Number)));
      raw &&= `SELECT r.* FROM (${raw}) r SEMI JOIN (${keys}) k ON ${this.keyMatch("r", "k")}`;
    } else {
      await sql.run(
        `CREATE OR REPLACE TEMP TABLE ${quoteIdentifier(keysTable)} AS SELECT *, ${this.bucketSql()} AS ${BUCKET} FROM (${keys})`,
      );
      raw = await this.keysRawSql(sql, keysTable);
    }
    await this.materialize(sql, into, raw && this.mergedSql(raw));
    await sql.run(`DROP TABLE IF EXISTS ${quoteIdentifier(keysTable)}`);
  }

  /**
   * The raw rows (as `rawSql`) of the keys in `keysTable` (their key columns and BUCKET): only their
   * buckets' files are read, and their rows are kept before the merge, so its cost follows the keys,
   * not the state (the files are sorted by key, so a scan can also skip row groups).
   */
  private async keysRawSql(sql: StateSql, keysTable: string): Promise<string | undefined> {
    const rows = await sql.rows(`SELECT DISTINCT ${BUCKET} AS b FROM ${quoteIdentifier(keysTable)}`);
    const raw = await this.rawSql(sql, this.storedBuckets(rows.map((r) => Number(r["b"]))));
    return (
      raw &&
      `SELECT r.* FROM (${raw}) r SEMI JOIN ${quoteIdentifier(keysTable)} k ON ${this.keyMatch("r", "k")}`
    );
  }

  /** The live rows (as `mergedSql`) of the keys in `keysTable`; undefined when none can be stored. */
  async keysMergedSql(sql: StateSql, keysTable: string): Promise<string | undefined> {
    const raw = await this.keysRawSql(sql, keysTable);
    return raw && this.mergedSql(raw);
  }

  /** Temp table `into` with the current rows whose time column is before `boundMicros` (epoch µs). */
  async loadOlderThan(sql: StateSql, boundMicros: number, into: string): Promise<void> {
    const column = this.shape.timeColumn;
    if (column === undefined) throw new Error(`state table ${this.name} has no time column`);
    const raw = await this.rawSql(sql, bucketsOlderThan(this.stored, boundMicros));
    await this.materialize(
      sql,
      into,
      raw && this.mergedSql(raw),
      `epoch_us(m.${quoteIdentifier(column)}) < ${Math.trunc(boundMicros)}`,
    );
  }

  /**
   * Temp table `into` with the current rows for which `predicate` (SQL over the state's columns)
   * holds. The files are scanned with the predicate before any merge (a scan can skip row groups its
   * statistics exclude), and only the keys of matching rows are merged: a key's newest row decides,
   * so a key whose older row matched and newer one does not stays out.
   */
  async loadWhere(sql: StateSql, predicate: string, into: string): Promise<void> {
    const raw = await this.rawSql(sql, this.storedBuckets(Object.keys(this.stored?.parts ?? {}).map(Number)));
    if (!raw) return this.materialize(sql, into, undefined);
    const keys = this.schema.key.map((c) => quoteIdentifier(c.name)).join(", ");
    const candidates = `${into}__keys`;
    await sql.run(
      `CREATE OR REPLACE TEMP TABLE ${quoteIdentifier(candidates)} AS SELECT DISTINCT ${keys} FROM (${raw}) WHERE NOT ${quoteIdentifier(DELETED_COLUMN)} AND (${predicate})`,
    );
    const matching = `SELECT r.* FROM (${raw}) r SEMI JOIN ${quoteIdentifier(candidates)} k ON ${this.keyMatch("r", "k")}`;
    await this.materialize(sql, into, this.mergedSql(matching), `(${predicate})`);
    await sql.run(`DROP TABLE IF EXISTS ${quoteIdentifier(candidates)}`);
  }

  /** Temp table `into` with every current row. */
  async loadAll(sql: StateSql, into: string): Promise<void> {
    const raw = await this.rawSql(sql, this.storedBuckets(Object.keys(this.stored?.parts ?? {}).map(Number)));
    await this.materialize(sql, into, raw && this.mergedSql(raw));
  }
}

type Change = { readonly kind: "upsert" | "insert" | "delete"; readonly sql: string };

/**
 * The changes a batch makes to a state version, applied in the order staged (the last change of a
 * key wins). `commit` writes the next version. An upsert's (or insert's) rows carry every column of
 * the state's schema and at most one row per key.
 */
export class StateWriter {
  readonly #changes = new Map<string, { table: StateTable; changes: Change[]; liveKeys?: string }>();
  #meta: Record<string, unknown>;
  #metaChanged = false;

  constructor(private readonly parent: StateVersion) {
    this.#meta = { ...parent.meta };
  }

  upsert(table: StateTable, rowsSql: string): void {
    this.staged(table).push({ kind: "upsert", sql: rowsSql });
  }

  /**
   * The caller has read the parent's rows of every key its changes to `table` touch: `liveKeysSql`
   * selects (the key columns, by name, each key once) each of those keys the parent holds and none
   * it does not (other keys of the parent may be there too). The write counts the buckets' rows
   * from it, without looking the keys up in the parent's files a second time.
   */
  liveKeysRead(table: StateTable, liveKeysSql: string): void {
    this.staged(table);
    this.#changes.get(table.name)!.liveKeys = liveKeysSql;
  }

  /**
   * An upsert of keys the caller knows the parent does not hold (it looked them up): when a table's
   * changes are all inserts, the write need not look its keys up again to count the bucket's rows.
   */
  insert(table: StateTable, rowsSql: string): void {
    this.staged(table).push({ kind: "insert", sql: rowsSql });
  }

  /** Deletes the keys `keysSql` selects (exactly the key columns, by name). */
  delete(table: StateTable, keysSql: string): void {
    this.staged(table).push({ kind: "delete", sql: keysSql });
  }

  /** Sets one entry of the version's meta (undefined removes it). */
  setMeta(name: string, value: unknown): void {
    if (JSON.stringify(this.#meta[name]) === JSON.stringify(value)) return;
    if (value === undefined) delete this.#meta[name];
    else this.#meta[name] = value;
    this.#metaChanged = true;
  }

  private staged(table: StateTable): Change[] {
    if (table.version !== this.parent)
      throw new Error(`state table ${table.name} belongs to another version`);
    let entry = this.#changes.get(table.name);
    if (!entry) this.#changes.set(table.name, (entry = { table, changes: [] }));
    return entry.changes;
  }

  /**
   * Writes the next version for batch `seq` and returns its key. Nothing staged and the meta unchanged:
   * the parent's key (no new files; undefined when the parent is the empty state).
   */
  async commit(sql: StateSql, seq: number): Promise<{ version: string | undefined; metrics: StateMetrics }> {
    const tables = { ...this.parent.manifest.tables };
    let changed = this.#metaChanged;
    for (const { table, changes, liveKeys } of this.#changes.values()) {
      if (changes.length === 0) continue;
      const writes = await writeTableChanges(sql, table, changes, seq, liveKeys);
      // A table's first version is recorded even when empty: its shape is fixed from then on.
      if (writes.length > 0 || !table.stored) changed = true;
      tables[table.name] = nextTable(table.stored, table.shape, writes);
    }
    if (!changed) return { version: this.parent.key, metrics: this.parent.metrics() };
    const manifest: StateManifest = {
      format: STATE_FORMAT,
      seq,
      parent: this.parent.key ?? null,
      meta: this.#meta,
      tables,
    };
    const version = await this.parent.putManifest(manifest);
    return { version, metrics: manifestMetrics(manifest) };
  }
}

/**
 * One file per touched bucket of a table, with the bucket's figures after the changes.
 *
 * 1. The changes become one table, the last change per key winning.
 * 2. Only the changed keys are looked up in the parent (`keysMergedSql`): an upsert of a key not
 *    live adds a row, a delete of a live key removes one, so a bucket's count follows from the
 *    parent's without reading the bucket. Changes that are all inserts need no lookup: each adds a
 *    row; the live keys the caller read (`liveKeysRead`) are taken as they are.
 * 3. A bucket whose live rows after the changes are all upserted by them (its count after equals
 *    its upserts: a view's few groups, each refreshed every batch) is written as a snapshot of
 *    those upserts, without reading it: every older file of it is dropped from the version, so its
 *    reads stay one file, not one per batch until the next snapshot.
 * 4. Otherwise a bucket is read whole only when it is due a snapshot (amortized: see `snapshotDue`),
 *    or when its oldest time may have grown (a delete in a table with a time column).
 * 5. Otherwise its oldest time is the lower of the parent's and the upserts' (a bound: a replaced
 *    row may have been the oldest, so `loadOlderThan` may read a bucket it need not, never miss one).
 * 6. The buckets' files are written by one partitioned COPY per source (the merged buckets, the
 *    changes), not one statement per bucket, and uploaded together. They are sorted by key only when
 *    one has more than a row group: a file of one row group is skipped or read whole by its
 *    statistics either way.
 */
async function writeTableChanges(
  sql: StateSql,
  table: StateTable,
  changes: readonly Change[],
  seq: number,
  liveKeys: string | undefined,
): Promise<BucketWrite[]> {
  const keys = table.schema.key.map((c) => quoteIdentifier(c.name)).join(", ");
  const nullValues = table.schema.value.map((c) => `NULL::${c.type} AS ${quoteIdentifier(c.name)}`);
  const parts = changes.map((change, i) => {
    const columns = change.kind === "delete" ? [keys, ...nullValues].join(", ") : table.columnList();
    return `SELECT ${columns}, ${change.kind === "delete"} AS ${quoteIdentifier(DELETED_COLUMN)}, ${i} AS __ebb_change FROM (${change.sql})`;
  });
  const name = (what: string) => `__ebb_state_${what}_${table.name}`;
  const changeTable = quoteIdentifier(name("changes"));
  const mergedTable = quoteIdentifier(name("merged"));
  const deleted = quoteIdentifier(DELETED_COLUMN);
  const time = table.shape.timeColumn;
  // 1.
  // A lone upsert has at most one row per key already: no sort to find each key's last change.
  const lone = changes.length === 1 && changes[0]!.kind !== "delete";
  const inserts = changes.every((change) => change.kind === "insert");
  const createChanges =
    `CREATE OR REPLACE TEMP TABLE ${changeTable} AS SELECT * EXCLUDE (__ebb_change), ${table.bucketSql()} AS ${BUCKET} FROM (${parts.join("\nUNION ALL\n")}) ` +
    (lone ? "" : `QUALIFY row_number() OVER (PARTITION BY ${keys} ORDER BY __ebb_change DESC) = 1`);
  // 2. Without a lookup of the changed keys in between (all inserts, or the caller read the live
  // keys), the change table and its figures are one call into DuckDB.
  const lookup = !inserts && liveKeys === undefined;
  if (lookup) await sql.run(createChanges);
  try {
    // 2. The live keys are joined where they are read (once: no table of them).
    const live = inserts ? undefined : lookup ? await table.keysMergedSql(sql, name("changes")) : liveKeys;
    const figures = await sql.rows(
      (lookup ? "" : `${createChanges};\n`) +
        `SELECT c.${BUCKET} AS b, count(*)::BIGINT AS n, ` +
        `count(*) FILTER (WHERE NOT c.${deleted})::BIGINT AS upserts, ` +
        `count(*) FILTER (WHERE NOT c.${deleted} AND l.__ebb_live IS NULL)::BIGINT AS added, ` +
        `count(*) FILTER (WHERE c.${deleted} AND l.__ebb_live)::BIGINT AS removed, bool_or(c.${deleted}) AS deletes` +
        `${time ? `, min(epoch_us(c.${quoteIdentifier(time)})) FILTER (WHERE NOT c.${deleted})::DOUBLE AS t` : ""} ` +
        `FROM ${changeTable} c ` +
        (live === undefined
          ? "CROSS JOIN (SELECT NULL::BOOLEAN AS __ebb_live) l "
          : `LEFT JOIN (SELECT ${keys}, true AS __ebb_live FROM (${live})) l ON ${table.keyMatch("c", "l")} `) +
        "GROUP BY 1 ORDER BY 1",
    );
    if (figures.length === 0) return [];
    // The bucket's live rows after the changes, exact from the parent's count and the lookup (2).
    const rowsAfter = (figure: DuckRow) =>
      (table.stored?.parts[String(figure["b"])]?.rows ?? 0) +
      Number(figure["added"]) -
      Number(figure["removed"]);
    // 3. The buckets whose live rows are all among the upserts.
    const covered = new Set(
      figures
        .filter((f) => rowsAfter(f) > 0 && rowsAfter(f) === Number(f["upserts"]))
        .map((f) => Number(f["b"])),
    );
    // 4. The buckets read whole, merged with the changes.
    const whole = figures
      .map((f) => Number(f["b"]))
      .filter((b, i) => {
        const part = table.stored?.parts[String(b)];
        return (
          !covered.has(b) &&
          (snapshotDue(part) || (time !== undefined && figures[i]!["deletes"] === true && part !== undefined))
        );
      });
    const exact = new Map<number, { rows: number; minTime: number | undefined }>();
    if (whole.length > 0) {
      const changeRows = `SELECT * EXCLUDE (${BUCKET}), 1000000 AS ${ORDER}, ${BUCKET} FROM ${changeTable} WHERE ${BUCKET} IN (${whole.join(", ")})`;
      const stored = await table.rawSql(sql, whole);
      const merged = table.mergedSql(stored ? `${stored}\nUNION ALL\n${changeRows}` : changeRows);
      await sql.run(`CREATE OR REPLACE TEMP TABLE ${mergedTable} AS ${merged}`);
      for (const r of await sql.rows(
        `SELECT ${BUCKET} AS b, count(*)::BIGINT AS n${time ? `, min(epoch_us(${quoteIdentifier(time)}))::DOUBLE AS t` : ""} FROM ${mergedTable} GROUP BY 1`,
      ))
        exact.set(Number(r["b"]), { rows: Number(r["n"]), minTime: optionalNumber(r["t"]) });
      for (const bucket of whole) if (!exact.has(bucket)) exact.set(bucket, { rows: 0, minTime: undefined });
    }
    const writes: BucketWrite[] = [];
    const files: {
      bucket: number;
      kind: "snapshot" | "changelog";
      /** Where its rows come from: the bucket merged whole (a snapshot due), or the changes (a changelog, or 3). */
      from: "merged" | "changes";
      rows: number;
      /** Rows of its file: the bucket's live rows for a snapshot, its changes for a changelog. */
      fileRows: number;
      minTime?: number;
    }[] = [];
    for (const figure of figures) {
      const bucket = Number(figure["b"]);
      const part = table.stored?.parts[String(bucket)];
      const kind = covered.has(bucket) || snapshotDue(part) ? "snapshot" : "changelog";
      // 5. A covered bucket's oldest time is its upserts' own, exact.
      const { rows, minTime } = exact.get(bucket) ?? {
        rows: rowsAfter(figure),
        minTime: covered.has(bucket)
          ? optionalNumber(figure["t"])
          : lowerOf(part?.minTime, optionalNumber(figure["t"])),
      };
      const from = kind === "snapshot" && !covered.has(bucket) ? "merged" : "changes";
      const fileRows = kind === "snapshot" ? rows : Number(figure["n"]);
      if (rows === 0) writes.push({ bucket, kind: "snapshot", rows: 0 });
      else files.push({ bucket, kind, from, rows, fileRows, ...(minTime !== undefined ? { minTime } : {}) });
    }
    // 6. A covered bucket's file is its upserts alone (its deletes are of keys it no longer holds).
    const coveredList = [...covered].join(", ");
    const sources = {
      merged: `SELECT ${table.columnList()}, false AS ${deleted}, ${BUCKET} FROM ${mergedTable}`,
      changes:
        `SELECT ${table.columnList()}, ${deleted}, ${BUCKET} FROM ${changeTable}` +
        (covered.size > 0 ? ` WHERE NOT (${deleted} AND ${BUCKET} IN (${coveredList}))` : ""),
    };
    const paths = new Map<number, string>();
    for (const from of ["merged", "changes"] as const) {
      const ofSource = files.filter((f) => f.from === from);
      const order = ofSource.some((f) => f.fileRows > ROW_GROUP_ROWS) ? keys : undefined;
      const buckets = ofSource.map((f) => f.bucket);
      for (const [bucket, path] of await copyBuckets(sql, sources[from], order, buckets))
        paths.set(bucket, path);
    }
    const uploaded = await Promise.all(
      files.map((f) => table.version.upload(paths.get(f.bucket)!, stateDataKey(table.version.flow, seq))),
    );
    files.forEach(({ fileRows: _, from: __, ...f }, i) => writes.push({ ...f, file: uploaded[i]! }));
    return writes;
  } finally {
    // One call for both: a round trip each was a tenth of a small view's state write.
    await sql.run([changeTable, mergedTable].map((temp) => `DROP TABLE IF EXISTS ${temp}`).join("; "));
  }
}

function storedHash(stored: StateTableManifest): BucketHash {
  return stored.hash ?? LEGACY_BUCKET_HASH;
}

/**
 * One parquet file per bucket of `buckets` of `source`'s rows (its BUCKET column names the bucket and
 * is left out of the files), sorted by `orderBy` when given. Returns each bucket's local path. One
 * partitioned COPY writes them all; a bucket DuckDB split into several files (it closes files past
 * `partitioned_write_max_open_files`) is written again alone.
 */
async function copyBuckets(
  sql: StateSql,
  source: string,
  orderBy: string | undefined,
  buckets: readonly number[],
): Promise<Map<number, string>> {
  const paths = new Map<number, string>();
  if (buckets.length === 0) return paths;
  const dir = `${await sql.newPath("")}.d`;
  await sql.run(
    `COPY (SELECT * FROM (${source}) WHERE ${BUCKET} IN (${buckets.join(", ")})${orderBy ? ` ORDER BY ${BUCKET}, ${orderBy}` : ""}) ` +
      `TO ${quoteLiteral(dir)} (FORMAT parquet, PARTITION_BY (${BUCKET}), ROW_GROUP_SIZE ${ROW_GROUP_ROWS})`,
  );
  for (const bucket of buckets) {
    const folder = path.join(dir, `${BUCKET}=${bucket}`);
    const written = (await readdir(folder).catch(() => [])).filter((name) => name.endsWith(".parquet"));
    if (written.length === 1) {
      paths.set(bucket, path.join(folder, written[0]!));
      continue;
    }
    const alone = await sql.newPath(".parquet");
    await sql.run(
      `COPY (SELECT * EXCLUDE (${BUCKET}) FROM (${source}) WHERE ${BUCKET} = ${bucket}${orderBy ? ` ORDER BY ${orderBy}` : ""}) ` +
        `TO ${quoteLiteral(alone)} (FORMAT parquet, ROW_GROUP_SIZE ${ROW_GROUP_ROWS})`,
    );
    paths.set(bucket, alone);
  }
  return paths;
}

function optionalNumber(value: unknown): number | undefined {
  return value === null || value === undefined ? undefined : Number(value);
}

function lowerOf(a: number | undefined, b: number | undefined): number | undefined {
  if (a === undefined) return b;
  if (b === undefined) return a;
  return Math.min(a, b);
}
