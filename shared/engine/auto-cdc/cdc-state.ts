import { z } from "zod";
import { openStateVersion, type StateSchema, type StateTable, type StateVersion } from "../../state/index.ts";
import type { ObjectStore } from "../../object-store/object-store.ts";
import type { Sandbox } from "../sandbox.ts";
import { quoteIdentifier } from "../../duck/sql-text.ts";
import { storedLayoutSchema, type StoredCdcLayout } from "./cdc-layout.ts";
import { AutoCdcStateError } from "./errors.ts";

/**
 * An AUTO CDC flow's per-key state on the operator state store (`shared/state`): one state table,
 * `cdc_keys`, keyed by the flow's keys, holding each key's retained events (its latest sequence,
 * tombstones; for SCD type 2 its history), and the truncate sequence in the version's meta. Batch
 * `seq` reads the version its parent checkpoint names and writes the next, which its checkpoint
 * names: a rewind that moves HEAD restores it with the table version and source offsets, and a
 * checkpoint reset (HEAD at the root) starts from the empty state.
 */

export const CDC_TABLE = "cdc_keys";
const TRUNCATE_META = "cdc_truncate";
const ADOPTING_META = "cdc_adopting";
const LAYOUT_META = "cdc_layout";

export interface CdcStateMeta {
  /** The highest truncate sequence applied (as DuckDB JSON text of the sequence type), if any. */
  readonly truncate?: { readonly json: string; readonly type: string };
  /**
   * The target may hold rows of keys the state lacks: a checkpoint reset emptied the state but kept
   * the table. Such a key's rows before the batch are read from the table, not derived from the state.
   */
  readonly adopting?: true;
  /**
   * What the state's events were applied under (keys, sequence, written and tracked columns): a
   * definition that applies them otherwise is refused (cdc-compatibility.ts). States written before
   * it was recorded have none.
   */
  readonly layout?: StoredCdcLayout;
}

const truncateSchema = z.object({ json: z.string(), type: z.string() });

export interface CdcStateChange {
  /** Rows (keys and events) replacing those keys' rows. */
  readonly upsertSql: string;
  /** Keys (a SELECT of exactly the key columns) whose rows are removed. */
  readonly deleteKeysSql: string;
  readonly meta: CdcStateMeta;
}

export interface CdcState {
  readonly meta: CdcStateMeta;
  /**
   * Creates temp table `into` holding the rows of the keys `keysSql` selects (every row without
   * it); `shapeSql` (a SELECT of the keys and the events list) gives the table's shape.
   */
  load(sandbox: Sandbox, into: string, shapeSql: string, keysSql?: string): Promise<void>;
  /** Writes the version of batch `seq` (this one with `change` applied) and returns its key. */
  write(sandbox: Sandbox, seq: number, change: CdcStateChange): Promise<string | undefined>;
}

export interface CdcStateRef {
  /** The pipeline's store (bucket root view). */
  readonly store: ObjectStore;
  readonly pipelineId: string;
  readonly flowId: string;
}

/** The state version a checkpoint names (`undefined`: the empty state). */
export async function openCdcState(ref: CdcStateRef, version: string | undefined): Promise<CdcState> {
  return (await readCdcState(ref, version)).state;
}

/**
 * The state version a checkpoint names, and the stored version under it: a Spark job that applies
 * the batch reads its buckets and Ebb writes the next version's manifest from the job's answer
 * (spark/spark-cdc-apply.ts).
 */
export async function readCdcState(
  ref: CdcStateRef,
  version: string | undefined,
): Promise<{ readonly state: CdcState; readonly version: StateVersion }> {
  const state = await openStateVersion({
    store: ref.store,
    flow: { pipelineId: ref.pipelineId, flowId: ref.flowId },
    ...(version !== undefined ? { version } : {}),
  });
  const stored = state.meta[TRUNCATE_META];
  const truncate = stored === undefined ? undefined : truncateSchema.safeParse(stored);
  const storedLayout = state.meta[LAYOUT_META];
  const layout = storedLayout === undefined ? undefined : storedLayoutSchema.safeParse(storedLayout);
  if ((truncate && !truncate.success) || (layout && !layout.success))
    throw new AutoCdcStateError(
      `the state of AUTO CDC flow "${ref.flowId}" (${version}) has a ${truncate?.success === false ? "truncate sequence" : "column layout"} Ebb did not write: reset the flow's checkpoint (reset_checkpoint_selection) or fully refresh its table`,
      { data: { flow: ref.flowId, version } },
    );
  const meta: CdcStateMeta = {
    ...(truncate ? { truncate: truncate.data } : {}),
    ...(state.meta[ADOPTING_META] === true ? { adopting: true } : {}),
    ...(layout ? { layout: layout.data } : {}),
  };
  return { state: new StoredCdcState(state, meta), version: state };
}

/** The next version's meta: the parent's with `meta`'s entries set (an absent one removed). */
export function nextCdcMeta(
  parent: Readonly<Record<string, unknown>>,
  meta: CdcStateMeta,
): Record<string, unknown> {
  const next: Record<string, unknown> = { ...parent };
  for (const [name, value] of metaEntries(meta)) {
    if (value === undefined) delete next[name];
    else next[name] = value;
  }
  return next;
}

/** The version meta's entries `meta` sets (undefined: removed), as both engines write them. */
function metaEntries(meta: CdcStateMeta): readonly (readonly [string, unknown])[] {
  return [
    [TRUNCATE_META, meta.truncate],
    [ADOPTING_META, meta.adopting],
    [LAYOUT_META, meta.layout],
  ];
}

class StoredCdcState implements CdcState {
  #table: StateTable | undefined;
  /** The temp table `load` filled: the parent's rows of every key a write may touch. */
  #loaded: string | undefined;

  constructor(
    private readonly version: StateVersion,
    readonly meta: CdcStateMeta,
  ) {}

  async load(sandbox: Sandbox, into: string, shapeSql: string, keysSql?: string): Promise<void> {
    const described = await sandbox.rows(`DESCRIBE (${shapeSql})`);
    const columns = described.map((r) => ({
      name: String(r["column_name"]),
      type: String(r["column_type"]),
    }));
    const schema: StateSchema = { key: columns.slice(0, -1), value: columns.slice(-1) };
    this.#table = this.version.table(CDC_TABLE, schema);
    if (keysSql === undefined) await this.#table.loadAll(sandbox, into);
    else await this.#table.loadKeys(sandbox, keysSql, into);
    this.#loaded = into;
  }

  async write(sandbox: Sandbox, seq: number, change: CdcStateChange): Promise<string | undefined> {
    if (!this.#table) throw new Error("the AUTO CDC state is written after it is loaded");
    const writer = this.version.writer();
    writer.delete(this.#table, change.deleteKeysSql);
    writer.upsert(this.#table, change.upsertSql);
    // A write touches only keys of the changes `load` was given, whose rows it read: the writer
    // need not look them up in the state's files again.
    writer.liveKeysRead(
      this.#table,
      `SELECT ${this.#table.schema.key.map((c) => quoteIdentifier(c.name)).join(", ")} FROM ${quoteIdentifier(this.#loaded!)}`,
    );
    for (const [name, value] of metaEntries(change.meta)) writer.setMeta(name, value);
    return (await writer.commit(sandbox, seq)).version;
  }
}
