import type { AnswerRow, DuckRow, DuckSession } from "../../duck/duck-session.ts";
import { filesInPlace, missingNow } from "../../duck/files-in-place.ts";
import { copyToScratch } from "../../duck/scratch-copies.ts";
import { withScratchFolder, type ScratchFolder } from "../../duck/scratch-folder.ts";
import { readScratchView, ScratchView } from "../../duck/scratch-view.ts";
import { quoteLiteral } from "../../duck/sql-text.ts";
import type { ObjectStore } from "../../object-store/object-store.ts";
import type { Action } from "../log/actions.ts";
import { commitTimestamp, findCommitInfo } from "../log/commit-file.ts";
import { ChangeDataNotRecordedError, ChangeFeedSchemaChangeError } from "../errors.ts";
import { parseSchema } from "../table/schema.ts";
import { readCommitRange } from "./change-feed-commits.ts";
import { readableInProcess, readChangeRowsInProcess } from "./change-rows-in-process.ts";
import { planChangeFeedRange } from "./change-feed-schemas.ts";
import {
  assumedFileRelationSql,
  fileRelationSql,
  type FileSource,
  type RelationColumn,
} from "./file-relation.ts";
import { dataFileKey } from "../log/data-file-paths.ts";
import { partitionConstants, tableColumns } from "./scan.ts";
import { loadSnapshot } from "./snapshot-loader.ts";
import type { Snapshot } from "./snapshot.ts";
import { vacuumedFilesError } from "./vacuumed-files.ts";

/** `_change_type` values (PROTOCOL.md "Change Data Files"). */
export const CHANGE_TYPES = ["insert", "update_preimage", "update_postimage", "delete"] as const;
export type ChangeType = (typeof CHANGE_TYPES)[number];

/** The columns the feed adds to the table's, with their DuckDB types. */
export const CHANGE_FEED_COLUMNS = [
  ["_change_type", "VARCHAR"],
  ["_commit_version", "BIGINT"],
  ["_commit_timestamp", "TIMESTAMPTZ"],
] as const;

/** One file to read for the feed, and where its `_change_type` comes from. */
export interface ChangeFile {
  readonly version: number;
  readonly timestamp: number;
  /** Log path (URI-encoded) of the data or change file. */
  readonly path: string;
  readonly partitionValues: Readonly<Record<string, string | null>>;
  /** A fixed change type for rows of an `add` / `remove`; `undefined` for a `cdc` file, which carries its own. */
  readonly changeType: ChangeType | undefined;
}

/** Operations that rewrite files to change some of their rows: their changes are only in `cdc` files. */
const ROW_REWRITES = new Set(["DELETE", "UPDATE", "MERGE"]);

/**
 * The files that hold one commit's row changes (PROTOCOL.md "Reader Requirements for AddCDCFile"):
 * its `cdc` files when it has any, and nothing else; otherwise the rows of every `add` with
 * `dataChange` as inserts and of every `remove` with `dataChange` as deletes. A DELETE, UPDATE or
 * MERGE that both removed and added files without `cdc` files rewrote rows it did not change: its
 * changes were not recorded, and the refusal is returned (a reader of the feed throws it when it
 * reaches that version; a stream that only reads appends never does).
 */
export function planCommitChanges(
  version: number,
  timestamp: number,
  actions: readonly Action[],
): ChangeFile[] | ChangeDataNotRecordedError {
  const at = { version, timestamp };
  const cdc = actions.flatMap((a) => ("cdc" in a ? [a.cdc] : []));
  if (cdc.length > 0) {
    return cdc.map((c) => ({
      ...at,
      path: c.path,
      partitionValues: c.partitionValues,
      changeType: undefined,
    }));
  }
  const operation = findCommitInfo(actions)?.operation ?? "";
  const rewrote =
    actions.some((a) => "add" in a && a.add.dataChange) &&
    actions.some((a) => "remove" in a && a.remove.dataChange);
  if (rewrote && ROW_REWRITES.has(operation)) return new ChangeDataNotRecordedError(version, operation);
  return actions.flatMap((a): ChangeFile[] => {
    if ("add" in a && a.add.dataChange) {
      return [{ ...at, path: a.add.path, partitionValues: a.add.partitionValues, changeType: "insert" }];
    }
    if ("remove" in a && a.remove.dataChange) {
      return [
        { ...at, path: a.remove.path, partitionValues: a.remove.partitionValues ?? {}, changeType: "delete" },
      ];
    }
    return [];
  });
}

export interface ChangeFeedOptions {
  readonly duck?: DuckSession;
  /** Name of the DuckDB view (default `table_changes`). */
  readonly viewName?: string;
  /** Zone of timestamp partition values written without an offset (see `PartitionValueOptions`). */
  readonly partitionTimeZone?: string;
  /** A snapshot the caller holds: the end version's schema is taken from it when it is that version. */
  readonly known?: Snapshot;
}

/**
 * The change data feed of commits `fromVersion` to `toVersion` (default: the latest) as a DuckDB
 * view: the table's columns (schema of `toVersion`) plus `_change_type`, `_commit_version` and
 * `_commit_timestamp`.
 */
export async function openChangeFeed(
  store: ObjectStore,
  fromVersion: number,
  toVersion?: number,
  options: ChangeFeedOptions = {},
): Promise<ScratchView> {
  return ScratchView.create(
    options.viewName ?? "table_changes",
    (duck, scratch) => changeFeedSql(store, fromVersion, toVersion, duck, scratch, options),
    options.duck,
  );
}

/** `table_changes(table, from, to)` as rows. */
export async function tableChanges(
  store: ObjectStore,
  fromVersion: number,
  toVersion?: number,
  options: Pick<ChangeFeedOptions, "partitionTimeZone"> = {},
): Promise<DuckRow[]> {
  return readScratchView("table_changes", (duck, scratch) =>
    changeFeedSql(store, fromVersion, toVersion, duck, scratch, options),
  );
}

/**
 * The change data feed of `fromVersion` to `toVersion` as a user is answered it, in `duck`: its
 * SELECT run once, without a view to bind first.
 */
export async function changeFeedAnswerRows(
  store: ObjectStore,
  fromVersion: number,
  toVersion: number | undefined,
  duck: DuckSession,
  options: Pick<ChangeFeedOptions, "partitionTimeZone" | "known"> = {},
): Promise<AnswerRow[]> {
  const plan = await planChangeFeed(store, fromVersion, toVersion, options);
  const inProcess = await inProcessRows(store, plan);
  if (inProcess) return inProcess;
  const timeZone = options.partitionTimeZone === undefined ? {} : { timeZone: options.partitionTimeZone };
  const answer = async (feed: PlacedChangeFeed) => {
    // Read at once in the table's columns; only a feed whose files all lack one (it was added after
    // them) needs DuckDB to tell which columns they have first, a second pass over every footer.
    try {
      return await duck.answerRows(
        await changeRelationSql(duck, feed.snapshot, feed.files, timeZone, { assumeColumns: true }),
      );
    } catch (error) {
      if (!isBinderError(error)) throw error;
      return duck.answerRows(await changeRelationSql(duck, feed.snapshot, feed.files, timeZone));
    }
  };
  // A local folder's files are read where they are: linking 100 of them into a scratch folder and
  // removing it cost more than DuckDB's read of them. The SELECT runs once, here, so no view outlives
  // the check that they exist; a file a concurrent VACUUM removes before DuckDB reads it is answered
  // as one removed before the check.
  const inPlace = filesInPlace(store, plan.keys, plan.missing);
  if (inPlace) {
    try {
      return await answer(placed(plan, inPlace));
    } catch (error) {
      const gone = missingNow(store, plan.keys);
      throw gone.length > 0 ? plan.missing(gone) : error;
    }
  }
  return withScratchFolder(async (scratch) => answer(await placeInScratch(store, plan, scratch)));
}

/** The feed's rows read without DuckDB (change-rows-in-process.ts), where that reader reads them. */
async function inProcessRows(store: ObjectStore, plan: ChangeFeedPlan): Promise<AnswerRow[] | undefined> {
  const { schemaString, partitionColumns } = plan.snapshot.metadata;
  const files = plan.files.map((file, i) => ({
    key: plan.keys[i]!,
    size: plan.sizes[i],
    version: file.version,
    timestamp: file.timestamp,
    changeType: file.changeType,
  }));
  const { fields } = parseSchema(schemaString);
  if (!readableInProcess(fields, partitionColumns, files)) return undefined;
  return readChangeRowsInProcess(store, fields, files, plan.missing);
}

/** DuckDB reports failures as plain `Error`s whose message starts with their kind. */
function isBinderError(error: unknown): boolean {
  return error instanceof Error && error.message.startsWith("Binder Error: ");
}

async function changeFeedSql(
  store: ObjectStore,
  fromVersion: number,
  toVersion: number | undefined,
  duck: DuckSession,
  scratch: ScratchFolder,
  options: Pick<ChangeFeedOptions, "partitionTimeZone" | "known">,
): Promise<string> {
  const timeZone = options.partitionTimeZone === undefined ? {} : { timeZone: options.partitionTimeZone };
  const { snapshot, files } = await changeFeedFiles(store, fromVersion, toVersion, scratch, options);
  return changeRelationSql(duck, snapshot, files, timeZone);
}

/** The feed's files, put in `scratch`, and the end version's snapshot, whose schema the feed has. */
async function changeFeedFiles(
  store: ObjectStore,
  fromVersion: number,
  toVersion: number | undefined,
  scratch: ScratchFolder,
  options: Pick<ChangeFeedOptions, "known">,
): Promise<PlacedChangeFeed> {
  return placeInScratch(store, await planChangeFeed(store, fromVersion, toVersion, options), scratch);
}

/** The feed's files and the end version's snapshot, before DuckDB is given a local path for each. */
interface ChangeFeedPlan {
  readonly snapshot: Snapshot;
  readonly files: readonly ChangeFile[];
  /** The object key of each file. */
  readonly keys: readonly string[];
  /** The bytes of each file, as its commit gives them (`undefined` where it does not). */
  readonly sizes: readonly (number | undefined)[];
  /** The error for files that are gone, given their indexes. */
  readonly missing: (indexes: readonly number[]) => Error;
}

interface PlacedChangeFeed {
  readonly snapshot: Snapshot;
  readonly files: { file: ChangeFile; localPath: string }[];
}

async function planChangeFeed(
  store: ObjectStore,
  fromVersion: number,
  toVersion: number | undefined,
  options: Pick<ChangeFeedOptions, "known">,
): Promise<ChangeFeedPlan> {
  const commits = await readCommitRange(store, fromVersion, toVersion);
  const to = toVersion ?? commits.at(-1)?.ref.version ?? 0;
  // The end version's snapshot gives the schema, and refuses tables this reader cannot read.
  const snapshot = options.known?.version === to ? options.known : await loadSnapshot(store, { version: to });
  await checkRangeSchemas(store, fromVersion, to, commits);
  const files = commits.flatMap(({ ref, actions }) => {
    const changes = planCommitChanges(
      ref.version,
      commitTimestamp(findCommitInfo(actions), ref.lastModified),
      actions,
    );
    if (changes instanceof ChangeDataNotRecordedError) throw changes;
    return changes;
  });
  const sizes = new Map<string, number | undefined>();
  for (const { actions } of commits) {
    for (const a of actions) {
      if ("add" in a) sizes.set(a.add.path, a.add.size);
      else if ("remove" in a) sizes.set(a.remove.path, a.remove.size ?? undefined);
      else if ("cdc" in a) sizes.set(a.cdc.path, a.cdc.size);
    }
  }
  return {
    snapshot,
    files,
    keys: files.map((f) => dataFileKey(f.path)),
    sizes: files.map((f) => sizes.get(f.path)),
    missing: vacuumedFilesError("changes", snapshot, files),
  };
}

async function placeInScratch(
  store: ObjectStore,
  plan: ChangeFeedPlan,
  scratch: ScratchFolder,
): Promise<PlacedChangeFeed> {
  return placed(plan, await copyToScratch(store, plan.keys, scratch, ".parquet", plan.missing));
}

function placed(plan: ChangeFeedPlan, localPaths: readonly string[]): PlacedChangeFeed {
  return {
    snapshot: plan.snapshot,
    files: plan.files.map((file, i) => ({ file, localPath: localPaths[i]! })),
  };
}

/**
 * Refuses a range whose rows cannot all be read in its end version's schema, as Delta refuses a
 * batch change feed across a schema change that is not additive (change-feed-schemas.ts). A range
 * without a `metaData` change after its start has one schema throughout: nothing more to read.
 */
async function checkRangeSchemas(
  store: ObjectStore,
  from: number,
  to: number,
  commits: readonly { readonly ref: { readonly version: number }; readonly actions: readonly Action[] }[],
): Promise<void> {
  const schemaOf = (actions: readonly Action[]) =>
    actions.find((a) => "metaData" in a)?.metaData.schemaString;
  const changes = commits
    .filter(({ ref }) => ref.version > from && ref.version <= to)
    .flatMap(({ ref, actions }) => {
      const schema = schemaOf(actions);
      return schema === undefined ? [] : [{ version: ref.version, schema: parseSchema(schema) }];
    })
    .sort((a, b) => a.version - b.version);
  if (changes.length === 0) return;
  const atStart =
    schemaOf(commits.find(({ ref }) => ref.version === from)?.actions ?? []) ??
    (await loadSnapshot(store, { version: from })).metadata.schemaString;
  const plan = planChangeFeedRange(from, to, [{ version: from, schema: parseSchema(atStart) }, ...changes]);
  if (!plan.readable) throw new ChangeFeedSchemaChangeError(from, to, plan.ranges, plan.breaks);
}

/**
 * The change rows of `files` (copied to local paths) as one SELECT: the columns of `snapshot`'s
 * schema plus `_change_type`, `_commit_version` and `_commit_timestamp` (the feed's one layout, for
 * `table_changes` and for streams reading a feed).
 */
export async function changeRelationSql(
  duck: DuckSession,
  snapshot: Snapshot,
  files: readonly { readonly file: ChangeFile; readonly localPath: string }[],
  timeZone: { readonly timeZone?: string } = {},
  { assumeColumns = false }: { readonly assumeColumns?: boolean } = {},
): Promise<string> {
  const relation = (sources: readonly FileSource[], columns: readonly RelationColumn[]) =>
    assumeColumns
      ? Promise.resolve(assumedFileRelationSql(sources, columns))
      : fileRelationSql(duck, sources, columns);
  const { schema, columns } = tableColumns(snapshot);
  const sources = files.map(({ file, localPath }) => ({
    file,
    source: {
      localPath,
      constants: {
        ...partitionConstants(schema, snapshot.metadata.partitionColumns, file.partitionValues, timeZone),
        _commit_version: String(file.version),
        _commit_timestamp: commitTimestampSql(file.timestamp),
        ...(file.changeType ? { _change_type: quoteLiteral(file.changeType) } : {}),
      },
    } satisfies FileSource,
  }));
  const feedColumns = (changeTypeSource: RelationColumn["source"]): RelationColumn[] => [
    ...columns,
    ...CHANGE_FEED_COLUMNS.map(([name, sqlType]) => ({
      name,
      sqlType,
      source: name === "_change_type" ? changeTypeSource : ("constant" as const),
    })),
  ];
  const fromCdc = sources.filter((s) => s.file.changeType === undefined).map((s) => s.source);
  const fromData = sources.filter((s) => s.file.changeType !== undefined).map((s) => s.source);
  const parts = [await relation(fromData, feedColumns("constant"))];
  if (fromCdc.length > 0) parts.push(await relation(fromCdc, feedColumns("physical")));
  return parts.map((sql) => `(${sql})`).join(" UNION ALL ");
}

/** Years an ISO text DuckDB parses holds: four digits, no sign. */
const ISO_YEARS = { first: 1, last: 9999 } as const;

/**
 * A commit's time (milliseconds since the epoch) as a TIMESTAMPTZ expression: an ISO literal with its
 * `Z`, where `epoch_ms(…)` gave a TIMESTAMP each file's constant then cast through the time zone
 * (~60 µs a file: 100 one-row commits' feed spent 5 ms on it). The same instant either way; years an
 * ISO text cannot carry keep `epoch_ms`.
 */
export function commitTimestampSql(millis: number): string {
  const date = new Date(millis);
  const year = date.getUTCFullYear();
  return year >= ISO_YEARS.first && year <= ISO_YEARS.last
    ? `TIMESTAMPTZ ${quoteLiteral(date.toISOString())}`
    : `epoch_ms(${millis}::BIGINT)`;
}
