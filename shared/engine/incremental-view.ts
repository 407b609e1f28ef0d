import { createHash } from "node:crypto";
import { z } from "zod";
import { quoteIdentifier } from "../duck/sql-text.ts";
import {
  type AddFile,
  dataFileKey,
  findCommitInfo,
  readCommit,
  type Snapshot,
  VersionNotFoundError,
} from "../delta/index.ts";
import {
  aggregateColumn,
  groupColumn,
  VIEW_FINAL,
  type AggregateKind,
  type IncrementalViewPlan,
} from "../pipeline/plan/index.ts";
import {
  openStateVersion,
  type StateFlow,
  type StateSchema,
  type StateVersion,
  StateVersionMissingError,
} from "../state/index.ts";
import type { ObjectStore } from "../object-store/object-store.ts";
import type { SnapshotRead } from "./dataset-catalog.ts";
import type { Sandbox } from "./sandbox.ts";
import { registerTableFiles } from "./snapshot-views.ts";
import { finalOf, partsOf } from "./stateful/partial-aggregates.ts";
import {
  SourceUnavailableError,
  UpstreamChangedError,
  UpstreamRefreshedError,
  UpstreamRewoundError,
} from "./errors.ts";
import { planTableSource } from "./table-stream-source.ts";

/**
 * A materialized view kept incrementally: its partial aggregates per key live in the operator state
 * store (shared/state), and each refresh merges in the partials of the rows its input gained.
 *
 * 1. The base: the refresh whose contents the view's table holds now. That is its latest commit, or,
 *    after a RESTORE (a rewind), the refresh at the version restored (and so on, for a RESTORE of a
 *    RESTORE). The base's commit names the state version it wrote and the input versions it read.
 * 2. Incremental when the query qualifies (view-aggregation.ts), the view's definition is the one the
 *    base recorded, the base wrote state for this query and input schema, and the input is the same
 *    table (metaData.id) whose lineage since the version the base read only appended rows: RESTOREs
 *    back to that version or later (a rewind of both) and compactions are passed over (`gainedFiles`).
 *    The rows gained are those of the files those appends added. Otherwise a full recompute, with the
 *    reason; a qualifying query then rebuilds its state from all rows, so the next refresh can be
 *    incremental again.
 * 3. The gained rows' partials merge with the state's; the next state version is written (its files,
 *    then its manifest); the output is the query's select list over every key's merged partials.
 * 4. The view's overwrite commit names that state version (`VIEW_STATE_PARAMETER`). Nothing is
 *    overwritten, so a rewind, which restores the view's table, restores its state with it.
 */

/** The `operationParameters` key of a refresh commit holding its inputs (materialized-view.ts step 2). */
export const VIEW_INPUTS_PARAMETER = "ebbViewInputs";
/** The `operationParameters` key of a refresh commit naming the state version it wrote (step 4). */
export const VIEW_STATE_PARAMETER = "ebbViewState";

/**
 * The state table of per-key partials (a Spark recompute writes it too: spark/spark-view-state.ts),
 * and the meta entry holding the query's signature.
 */
export const GROUPS_TABLE = "groups";
const SIGNATURE_META = "view";
/** The meta entry holding what the view's query and partials describe as (`describeView`). */
const DESCRIBED_META = "described";

const SEEN = "__ebb_view_seen";
const MERGED = "__ebb_view_merged";
const TOUCHED = "__ebb_view_touched";
const OUTPUT = "__ebb_view_output";

export type RefreshKind = "INCREMENTAL" | "FULL_RECOMPUTE";

/** What a refresh commit records of its inputs (materialized-view.ts step 2), as parsed back. */
export const viewInputsSchema = z.object({
  view: z.object({
    sql: z.string(),
    partition_by: z.unknown(),
    properties: z.unknown(),
    expectations: z.unknown().optional(),
  }),
  reads: z.array(
    z.union([
      z.object({ view: z.string(), sql: z.string() }),
      z.object({ table: z.string(), id: z.string(), version: z.number().int().nonnegative() }),
    ]),
  ),
});
export type ViewInputs = z.infer<typeof viewInputsSchema>;

/** The refresh the view's contents come from (step 1). */
interface ViewBase {
  readonly inputs: ViewInputs;
  readonly stateVersion?: string;
  /** The version of the view's table that refresh committed, when a RESTORE brought it back. */
  readonly restored?: number;
}

/** Steps 1 and 2: how to refresh, with the state and the rows to start from. */
export type IncrementalChoice =
  | {
      readonly refresh: "INCREMENTAL";
      readonly reason: string;
      readonly state: StateVersion;
      readonly files: readonly AddFile[];
    }
  | { readonly refresh: "FULL_RECOMPUTE"; readonly reason: string };

export interface ChoiceRequest {
  readonly viewStore: ObjectStore;
  /** The view's table now; undefined when it has none. */
  readonly current: Snapshot | undefined;
  readonly inputs: ViewInputs;
  readonly plan: IncrementalViewPlan;
  readonly read: Extract<SnapshotRead, { kind: "table" }>;
  readonly inputSnapshot: Snapshot;
  readonly stateStore: ObjectStore;
  readonly flow: StateFlow;
}

const full = (reason: string): IncrementalChoice => ({ refresh: "FULL_RECOMPUTE", reason });

export async function chooseIncremental(request: ChoiceRequest): Promise<IncrementalChoice> {
  const { current, plan, read } = request;
  if (!current) return full("the view has no table yet (its first refresh, or a full refresh)");
  const base = await viewBase(request.viewStore, current.commitInfo);
  if (typeof base === "string") return full(base);
  if (JSON.stringify(base.inputs.view) !== JSON.stringify(request.inputs.view))
    return full("the view's definition changed since its last refresh");
  if (!base.stateVersion) return full("its last refresh kept no incremental state");
  const recorded = base.inputs.reads.find((r) => "table" in r && r.table === read.name);
  if (!recorded || !("table" in recorded) || base.inputs.reads.length !== request.inputs.reads.length)
    return full("the view reads other inputs than at its last refresh");
  // The state the base kept is read while the input's log is walked (a GET beside the log's reads):
  // a missing state version is an answer, not a failure, so the read never rejects.
  const opened = openStateVersion({
    store: request.stateStore,
    flow: request.flow,
    version: base.stateVersion,
  }).then(
    (state) => ({ state }),
    (error: unknown) => ({ error }),
  );
  const gained = await gainedFiles(
    read.name,
    read.store,
    request.inputSnapshot,
    recorded,
    request.flow.flowId,
  );
  if (typeof gained === "string") return full(gained);
  const stateRead = await opened;
  if ("error" in stateRead) {
    if (stateRead.error instanceof StateVersionMissingError)
      return full("the state its last refresh kept was removed (VACUUM of an old refresh's state)");
    throw stateRead.error;
  }
  const state: StateVersion = stateRead.state;
  if (state.meta[SIGNATURE_META] !== stateSignature(plan, request.inputSnapshot))
    return full("its state was kept for another query or input schema");
  const files = `${gained.length} new data file${gained.length === 1 ? "" : "s"}`;
  return {
    refresh: "INCREMENTAL",
    reason:
      base.restored === undefined
        ? `input ${read.name} only gained rows since the last refresh (${files})`
        : `from the state of its refresh at version ${base.restored}, which a RESTORE of the view (a rewind) brought back: input ${read.name} only gained rows since that refresh (${files})`,
    state,
    files: gained,
  };
}

export interface RestoredCheck {
  readonly viewStore: ObjectStore;
  /** The view's table now, whose latest commit is a RESTORE. */
  readonly current: Snapshot;
  readonly inputs: ViewInputs;
  readonly reads: readonly SnapshotRead[];
  readonly snapshots: ReadonlyMap<string, Snapshot>;
  /** The view's state flow id, as its readers name it. */
  readonly flowId: string;
}

/**
 * After a RESTORE of the view (a rewind), whether its contents are already what its SQL would give:
 * the refresh they come from (step 1) had this definition and read these tables, and none of them
 * gained or lost a row since (a RESTORE of the input to that version gives back exactly its rows).
 * Then a refresh would only write the same rows again. The reason when so, otherwise undefined.
 */
export async function restoredRefreshCurrent(check: RestoredCheck): Promise<string | undefined> {
  const base = await viewBase(check.viewStore, check.current.commitInfo);
  if (typeof base === "string" || base.restored === undefined) return undefined;
  if (JSON.stringify(base.inputs.view) !== JSON.stringify(check.inputs.view)) return undefined;
  if (base.inputs.reads.length !== check.reads.length) return undefined;
  for (const read of check.reads) {
    if (read.kind !== "table") return undefined;
    const recorded = base.inputs.reads.find((r) => "table" in r && r.table === read.name);
    if (!recorded || !("table" in recorded)) return undefined;
    const gained = await gainedFiles(
      read.name,
      read.store,
      check.snapshots.get(read.name)!,
      recorded,
      check.flowId,
    );
    if (typeof gained === "string" || gained.length > 0) return undefined;
  }
  return `a RESTORE brought back its refresh at version ${base.restored}, and its inputs hold the rows that refresh read`;
}

/**
 * The state version the view's table at `version` continues from: that of the refresh its contents
 * come from (step 1), if it kept one and that refresh is still in the log. A VACUUM of the view's
 * state keeps it for each version a live rewind point restores, and for HEAD.
 */
export async function viewStateAt(viewStore: ObjectStore, version: number): Promise<string | undefined> {
  let info: Snapshot["commitInfo"];
  try {
    info = findCommitInfo(await readCommit(viewStore, version));
  } catch (error) {
    // A refresh after a RESTORE to it could not read its base either (step 1): it recomputes.
    if (error instanceof VersionNotFoundError) return undefined;
    throw error;
  }
  const base = await viewBase(viewStore, info);
  return typeof base === "string" ? undefined : base.stateVersion;
}

/** Step 1, from the commit that made the view's table what it is, or why there is no base. */
async function viewBase(store: ObjectStore, head: Snapshot["commitInfo"]): Promise<ViewBase | string> {
  let info = head;
  let restored: number | undefined;
  // A RESTORE of a RESTORE points further back; a rewind loop cannot go on for ever.
  for (let hops = 0; hops < 16; hops++) {
    const parameters = info?.operationParameters ?? {};
    const recorded = parameters[VIEW_INPUTS_PARAMETER];
    if (typeof recorded === "string") {
      const inputs = viewInputsSchema.safeParse(JSON.parse(recorded));
      if (!inputs.success) return "its last refresh recorded its inputs in another form";
      const state = parameters[VIEW_STATE_PARAMETER];
      return {
        inputs: inputs.data,
        ...(typeof state === "string" ? { stateVersion: state } : {}),
        ...(restored === undefined ? {} : { restored }),
      };
    }
    if (info?.operation !== "RESTORE")
      return `the view's table was changed by ${info?.operation ?? "a commit"} since its last refresh`;
    const target = Number(parameters["version"]);
    if (!Number.isInteger(target)) return "the view's table was restored to a version it does not name";
    restored = target;
    try {
      info = findCommitInfo(await readCommit(store, target));
    } catch (error) {
      if (error instanceof VersionNotFoundError)
        return `the refresh the view was restored to (version ${target}) is no longer in its log`;
      throw error;
    }
  }
  return "the view's table was restored too many times over";
}

/**
 * The data files `input` gained since `recorded`, or why it did more than gain rows. Its lineage is
 * walked from `now` back to `recorded` as a stream reader walks it (table-stream-plan.ts): a RESTORE
 * to `recorded` or later (a rewind) skips the abandoned versions, since it gives back exactly that
 * version's rows; a compaction (`dataChange: false`) changes no rows; every other live commit must
 * only append. The files the appends added are the rows gained, even when a compaction has since
 * replaced them: such a file is still readable until VACUUM removes it.
 */
async function gainedFiles(
  name: string,
  store: ObjectStore,
  now: Snapshot,
  recorded: { readonly id: string; readonly version: number },
  reader: string,
): Promise<AddFile[] | string> {
  if (now.metadata.id !== recorded.id)
    return `input ${name} was dropped and created again since the last refresh`;
  if (now.version < recorded.version)
    return `input ${name} is at version ${now.version}, before version ${recorded.version} the last refresh read`;
  if (now.version === recorded.version) return [];
  let plan;
  try {
    plan = await planTableSource(
      { store, flow: reader, upstream: name, snapshot: now },
      { kind: "table", tableId: recorded.id, nextVersion: recorded.version + 1, rowsRead: 0 },
      {},
    );
  } catch (error) {
    if (error instanceof UpstreamRewoundError)
      return `input ${name} was restored to version ${error.restoredVersion}, before version ${recorded.version} the last refresh read`;
    if (error instanceof UpstreamChangedError)
      return `input ${name} had a ${error.operation} that removed rows (version ${error.version}) since the last refresh`;
    if (error instanceof UpstreamRefreshedError)
      return `input ${name} was truncated or fully refreshed since the last refresh`;
    if (error instanceof SourceUnavailableError) return error.message;
    throw error;
  }
  if (!plan) return `input ${name} has no table`;
  const files: AddFile[] = [];
  for (const slice of plan.slices) {
    const file = plan.files.get(slice.path)!;
    if (!now.files.has(file.path) && !(await store.head(dataFileKey(file.path))))
      return `data file ${file.path}, which input ${name} gained since the last refresh, was compacted and then removed by VACUUM`;
    files.push(file);
  }
  return files;
}

/** The meta a state version of the view's partials holds: what they mean (a Spark recompute's too). */
export function viewStateMeta(plan: IncrementalViewPlan, input: Snapshot): Record<string, unknown> {
  return { [SIGNATURE_META]: stateSignature(plan, input) };
}

/** What the kept partials mean: the query's signature and the input's schema. */
function stateSignature(plan: IncrementalViewPlan, input: Snapshot): string {
  return JSON.stringify({ query: plan.stateSignature, input: input.metadata.schemaString });
}

export interface AggregateRequest {
  readonly sandbox: Sandbox;
  readonly plan: IncrementalViewPlan;
  /** What the view is, for its errors. */
  readonly what: string;
  readonly read: Extract<SnapshotRead, { kind: "table" }>;
  readonly inputSnapshot: Snapshot;
  /** The state to merge into (empty on a full recompute) and the rows to add (all on a full one). */
  readonly state: StateVersion;
  readonly files: Iterable<AddFile>;
  /** Names the state's files (the view's next table version). */
  readonly seq: number;
}

/**
 * Steps 3: the output as a SELECT over a temp table of the sandbox (for the overwrite to write from
 * there), its row count, and the state version written.
 */
export async function aggregateView(request: AggregateRequest): Promise<{
  sql: string;
  rows: number;
  stateVersion: string | undefined;
  columns: { name: string; duckType: string }[];
}> {
  const { sandbox, plan, state } = request;
  await registerTableFiles(sandbox, request.read, request.inputSnapshot, request.files);
  const describedKey = describedFor(plan, request.inputSnapshot);
  const kept = describedSchema.safeParse(state.meta[DESCRIBED_META]);
  const described =
    kept.success && kept.data.for === describedKey ? kept.data : await describeView(request, describedKey);
  const output = described.output;
  const types = new Map(described.partials);
  // Parquet has no HUGEINT: integer sums are kept as BIGINT (as windowed aggregation keeps them).
  const typeOf = (name: string) => (types.get(name) === "HUGEINT" ? "BIGINT" : types.get(name)!);
  const keys = plan.groupKeys.map((_, j) => groupColumn(j));
  const parts = plan.aggregates.flatMap((a, i) => partsOf(a.kind, i));
  const list = (names: readonly string[]) => names.map((n) => quoteIdentifier(n)).join(", ");
  const cast = (name: string, type: string, merge = (column: string, _type: string) => column) =>
    `CAST(${merge(quoteIdentifier(name), type)} AS ${type}) AS ${quoteIdentifier(name)}`;
  const schema: StateSchema = {
    key: keys.map((name) => ({ name, type: typeOf(name) })),
    value: parts.map((p) => ({ name: p.name, type: typeOf(p.name) })),
  };
  const table = state.table(GROUPS_TABLE, schema);
  await table.loadAll(sandbox, SEEN);
  // The gained rows' partials merge with the kept ones in one statement; TOUCHED marks the groups
  // the gained rows hold, the ones the state write upserts.
  const gained = `SELECT ${list(keys)}${parts.map((p) => `, ${cast(p.name, typeOf(p.name))}`).join("")}, true AS ${TOUCHED} FROM (${plan.partialSql})`;
  const merged =
    `CREATE OR REPLACE TEMP TABLE ${MERGED} AS SELECT ${list(keys)}${parts.map((p) => `, ${cast(p.name, typeOf(p.name), p.merge)}`).join("")}, bool_or(${TOUCHED}) AS ${TOUCHED} ` +
    `FROM (${gained} UNION ALL BY NAME SELECT *, false AS ${TOUCHED} FROM ${SEEN}) GROUP BY ALL`;
  // The final values (VIEW_FINAL, which the final statement reads) and the output in one statement.
  const final = `SELECT ${[
    ...keys.map((k) => quoteIdentifier(k)),
    ...plan.aggregates.map(
      (a, i) => `${finalOf(a.kind as AggregateKind, i, typeOf)} AS ${aggregateColumn(i)}`,
    ),
  ].join(", ")} FROM ${MERGED}`;
  // The final statement's columns take the names the query's DESCRIBE gave, by position.
  const named = `(${plan.finalSql}) AS __ebb_view_named(${output.map((c) => quoteIdentifier(c.name)).join(", ")})`;
  const outputSql = `CREATE OR REPLACE TEMP TABLE ${OUTPUT} AS WITH ${VIEW_FINAL} AS (${final}) SELECT ${output
    .map((c) => `CAST(${quoteIdentifier(c.name)} AS ${c.type}) AS ${quoteIdentifier(c.name)}`)
    .join(", ")} FROM ${named}`;
  // Both in one call (the answer is the output's row count): one round trip into DuckDB fewer.
  const [created] = await sandbox.rows(`${merged};\n${outputSql}`);
  const writer = state.writer();
  writer.setMeta(SIGNATURE_META, stateSignature(plan, request.inputSnapshot));
  writer.setMeta(DESCRIBED_META, described);
  writer.upsert(table, `SELECT * EXCLUDE (${TOUCHED}) FROM ${MERGED} WHERE ${TOUCHED}`);
  // Every group the state holds is in SEEN already: the write need not look the groups up again.
  writer.liveKeysRead(table, `SELECT ${list(keys)} FROM ${SEEN}`);
  const written = await writer.commit(sandbox, request.seq);
  return {
    sql: `SELECT * FROM ${OUTPUT}`,
    rows: Number(created?.["Count"] ?? 0),
    stateVersion: written.version,
    // OUTPUT's columns are these, cast to these types: the overwrite need not describe it again.
    columns: output.map((c) => ({ name: c.name, duckType: c.type })),
  };
}

/**
 * The names and types the view's query gives (so both ways write the same table) and its partials'
 * types, for `for` (`describedFor`): the query, its partials and the input's schema. They depend on
 * nothing else, so a refresh keeps them in its state's meta and the next one over the same query and
 * input schema takes them from there, two DESCRIBEs fewer.
 */
const describedSchema = z.object({
  for: z.string(),
  output: z.array(z.object({ name: z.string(), type: z.string() })),
  partials: z.array(z.tuple([z.string(), z.string()])),
});
type Described = z.infer<typeof describedSchema>;

/** A digest, not the text: the input's schema can be long, and the meta is read back on every refresh. */
function describedFor(plan: IncrementalViewPlan, input: Snapshot): string {
  const text = JSON.stringify({
    query: plan.sql,
    partials: plan.partialSql,
    input: input.metadata.schemaString,
  });
  return createHash("sha256").update(text).digest("hex");
}

async function describeView(request: AggregateRequest, key: string): Promise<Described> {
  const { sandbox, plan } = request;
  // The first statement over the user's query: a column it names that the input lacks fails here, as the user's.
  const described = await sandbox.explainingFailures(request.what, () =>
    sandbox.rows(`DESCRIBE ${plan.sql}`),
  );
  // The partials' types from a DESCRIBE (nothing runs).
  const partials = await sandbox.rows(`DESCRIBE ${plan.partialSql}`);
  return {
    for: key,
    output: described.map((r) => ({ name: String(r["column_name"]), type: String(r["column_type"]) })),
    partials: partials.map((r) => [String(r["column_name"]), String(r["column_type"])] as [string, string]),
  };
}
