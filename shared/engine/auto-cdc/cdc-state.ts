import { randomUUID } from "node:crypto";
import { readFile } from "node:fs/promises";
import { z } from "zod";
import { quoteIdentifier as q, quoteLiteral } from "../../duck/sql-text.ts";
import { flowStatePrefix } from "../../store/bucket-layout.ts";
import { ObjectNotFoundError } from "../../store/errors.ts";
import type { ObjectStore } from "../../store/object-store.ts";
import type { Sandbox } from "../sandbox.ts";
import { AutoCdcStateError } from "./errors.ts";

/**
 * An AUTO CDC flow's per-key state (the events each key retains: its latest sequence, tombstones;
 * for SCD type 2 its history) and a little meta (the truncate sequence), versioned with the flow's
 * checkpoints: batch `seq` reads the version its parent checkpoint's batch wrote and writes its own.
 * A rewind that moves HEAD to a checkpoint thereby restores that checkpoint's state with the table
 * version and source offsets; a checkpoint reset (HEAD at the root) starts from the empty state.
 *
 * The port is small on purpose (load the rows of some keys, write the next version) so the store
 * behind it can change. This one keeps a whole version as one Parquet file plus a manifest whose key
 * follows from the batch's seq (`state/<pipelineId>/<flowId>/<seq>-cdc.json`): a retried batch
 * recomputes the same state from the same parent and input and writes the same manifest.
 */

export interface CdcStateMeta {
  /** The highest truncate sequence applied (as DuckDB JSON text of the sequence type), if any. */
  readonly truncate?: { readonly json: string; readonly type: string };
}

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
   * Creates temp table `into` holding the rows of the keys `keysSql` selects (all rows without it),
   * shaped like `shapeSql` (a SELECT of the keys and the events list) when the state has none.
   */
  load(sandbox: Sandbox, into: string, shapeSql: string, keysSql?: string): Promise<void>;
  /** Writes the version of batch `seq`: this one with `change` applied. */
  write(sandbox: Sandbox, seq: number, change: CdcStateChange): Promise<void>;
}

const manifestSchema = z.object({
  format: z.literal("ebb-cdc-state/1"),
  rows: z.string().optional(),
  meta: z.object({ truncate: z.object({ json: z.string(), type: z.string() }).optional() }),
});

export interface CdcStateRef {
  /** The pipeline's store (bucket root view). */
  readonly store: ObjectStore;
  readonly pipelineId: string;
  readonly flowId: string;
  readonly keys: readonly string[];
}

/** The state batch `seq` wrote (`ROOT_SEQ`, 0: the empty state). */
export async function openCdcState(ref: CdcStateRef, seq: number): Promise<CdcState> {
  if (seq === 0) return new FileCdcState(ref, undefined, {});
  const key = manifestKey(ref, seq);
  let bytes: Uint8Array;
  try {
    bytes = await ref.store.get(key);
  } catch (error) {
    if (!(error instanceof ObjectNotFoundError)) throw error;
    throw new AutoCdcStateError(
      `the per-key state of AUTO CDC flow "${ref.flowId}" at batch ${seq} is gone (${key}): reset the flow's checkpoint (reset_checkpoint_selection) to re-apply its source from the start, or fully refresh its table`,
      { cause: error, data: { flow: ref.flowId, seq, key } },
    );
  }
  const parsed = manifestSchema.safeParse(JSON.parse(new TextDecoder().decode(bytes)));
  if (!parsed.success)
    throw new AutoCdcStateError(`the state file ${key} is not one Ebb wrote`, { data: { key } });
  return new FileCdcState(ref, parsed.data.rows, parsed.data.meta);
}

function manifestKey(ref: CdcStateRef, seq: number): string {
  return `${flowStatePrefix(ref.pipelineId, ref.flowId)}${String(seq).padStart(10, "0")}-cdc.json`;
}

class FileCdcState implements CdcState {
  #local: string | undefined;

  constructor(
    private readonly ref: CdcStateRef,
    private readonly rowsKey: string | undefined,
    readonly meta: CdcStateMeta,
  ) {}

  async load(sandbox: Sandbox, into: string, shapeSql: string, keysSql?: string): Promise<void> {
    const rows = await this.#rows(sandbox);
    if (!rows) {
      await sandbox.run(`CREATE OR REPLACE TEMP TABLE ${q(into)} AS SELECT * FROM (${shapeSql}) LIMIT 0`);
      return;
    }
    const filter = keysSql
      ? ` WHERE EXISTS (SELECT 1 FROM (${keysSql}) __k WHERE ${this.#keysMatch("__k", "__s")})`
      : "";
    await sandbox.run(`CREATE OR REPLACE TEMP TABLE ${q(into)} AS SELECT * FROM ${rows} __s${filter}`);
  }

  async write(sandbox: Sandbox, seq: number, change: CdcStateChange): Promise<void> {
    const rows = await this.#rows(sandbox);
    const touched = `SELECT ${this.#keys()} FROM (${change.upsertSql}) UNION SELECT * FROM (${change.deleteKeysSql})`;
    const kept = rows
      ? `SELECT * FROM ${rows} __s WHERE NOT EXISTS (SELECT 1 FROM (${touched}) __k WHERE ${this.#keysMatch("__k", "__s")}) UNION ALL BY NAME `
      : "";
    const path = await sandbox.newPath(".parquet");
    const [written] = await sandbox.rows(
      `COPY (${kept}SELECT * FROM (${change.upsertSql})) TO ${quoteLiteral(path)} (FORMAT parquet)`,
    );
    const prefix = flowStatePrefix(this.ref.pipelineId, this.ref.flowId);
    let rowsKey: string | undefined;
    if (Number(written?.["Count"] ?? 0) > 0) {
      rowsKey = `${prefix}${String(seq).padStart(10, "0")}-cdc-${randomUUID()}.parquet`;
      await this.ref.store.put(rowsKey, await readFile(path));
    }
    const manifest: z.infer<typeof manifestSchema> = {
      format: "ebb-cdc-state/1",
      ...(rowsKey ? { rows: rowsKey } : {}),
      meta: change.meta,
    };
    await this.ref.store.put(manifestKey(this.ref, seq), new TextEncoder().encode(JSON.stringify(manifest)));
  }

  /** The rows file in the sandbox (downloaded once), as a relation; undefined when empty. */
  async #rows(sandbox: Sandbox): Promise<string | undefined> {
    if (!this.rowsKey) return undefined;
    this.#local ??= await sandbox.writeFile(await this.ref.store.get(this.rowsKey), ".parquet");
    return `read_parquet(${quoteLiteral(this.#local)})`;
  }

  #keys(): string {
    return this.ref.keys.map((k) => q(k)).join(", ");
  }

  #keysMatch(a: string, b: string): string {
    return this.ref.keys.map((k) => `${a}.${q(k)} IS NOT DISTINCT FROM ${b}.${q(k)}`).join(" AND ");
  }
}
