import { isDeepStrictEqual } from "node:util";
import type { ObjectStore } from "../object-store/object-store.ts";
import type { FlowOptions } from "../pipeline/definition-schema.ts";
import type { Source } from "../pipeline/source-schema.ts";
import { parseTimestamp } from "../pipeline/timestamp.ts";
import { deletedFileRetention, versionAtTimestamp } from "../delta/index.ts";
import { quoteIdentifier, quoteLiteral } from "../duck/sql-text.ts";
import {
  DEFAULT_MAX_FILES_PER_BATCH,
  fitRows,
  landFiles,
  listSourceFiles,
  planFileBatch,
} from "./auto-loader-source.ts";
import { fitBytes, type BatchSize } from "./batch-size.ts";
import { CheckpointStateError, FileAboveBatchBoundError, SourceUnavailableError } from "./errors.ts";
import { fitRowGroups, landRowGroups, readRowGroups, rowGroupBytes } from "./parquet-row-groups.ts";
import { FlowNotSupportedOnSparkError } from "./spark/errors.ts";
import type { EventStreams } from "../store/event-streams.ts";
import { kafkaBatchSource } from "./kafka-source.ts";
import { kinesisBatchSource } from "./kinesis-source.ts";
import { FileSetState } from "./file-set-state.ts";
import { kafkaBehind, kafkaRecordsReplayed } from "./replay-frontier.ts";
import { fullListingDue, IdleListings, listingAfter, listingStart } from "./incremental-listing.ts";
import { BAD_RECORD_COLUMNS, isMalformedInputError, readRecords, type LandedFile } from "./record-reader.ts";
import type { Sandbox } from "./sandbox.ts";
import type {
  FileSetOffset,
  JoinOffset,
  KafkaOffset,
  KinesisOffset,
  SourceOffset,
  TableOffset,
} from "./source-offsets.ts";
import { loadTableBatch, planTableSource, type PlannedTableBatch } from "./table-stream-source.ts";
import { MICRO_BATCH_NAME } from "../pipeline/dataset-references.ts";
import type { PlannedInput } from "./planned-input.ts";

/**
 * A flow's source behind one interface for the micro-batch protocol: `plan` chooses the next batch's
 * end offset (writing any source state it needs first), `load` puts the rows between two offsets into
 * the sandbox as `source` (a view over a table's batch files; for JSON a view read in one pass with
 * the query; otherwise a temp table of checked records) and malformed records into `__ebb_bad_records`.
 */

/** Malformed records of the batch. */
export const BAD_RECORDS_TABLE = "__ebb_bad_records";

export interface PlannedSourceBatch {
  readonly end: SourceOffset;
  /** The source state the batch wrote (an auto_loader changelog), if any. */
  readonly stateRef?: string;
  /** The batch takes everything the source held when planned: no need to plan another to know. */
  readonly caughtUp: boolean;
  /** What the batch takes of its source, where it can be known before reading it. */
  readonly size?: BatchSize;
  /** What the source still held past the batch when planned, where Ebb can count it. */
  readonly backlog?: SourceBacklog;
}

/** A source's backlog behind a batch, as Databricks' flow_progress metrics name it (`backlog_*`). */
export interface SourceBacklog {
  /** auto_loader: files listed and not yet taken, and their bytes. */
  readonly files?: number;
  readonly bytes?: number;
  /** Kafka: records past the batch's end offsets, all partitions. */
  readonly records?: number;
  /**
   * How old the oldest data left behind is: auto_loader, the oldest listed file not yet taken (by its
   * last-modified time; 0 when none is left); Kinesis, the shard furthest behind (MillisBehindLatest).
   */
  readonly seconds?: number;
}

export interface LoadedSourceBatch {
  /**
   * Records read: settled later where the source counts them while the query runs (auto_loader's
   * JSON lines, one pass with the query), and then awaited once the batch is committed.
   */
  readonly rowsIn: number | Promise<number>;
  readonly badRecords: number;
  /** The newest upstream commit the batch consumes (for the causal commit timestamp). */
  readonly newestUpstreamTimestamp?: number;
  /** RESTORE commits of the upstream this batch skips (semantics.md "Doing the rewind"). */
  readonly skippedRestores: readonly { readonly version: number; readonly restoredVersion: number }[];
  /**
   * Present when `source` is a view over files not checked yet (JSON's one-pass fast path): reads the
   * batch again checking every record, for when the query failed on a malformed one.
   */
  readonly strict?: () => Promise<LoadedSourceBatch>;
}

export interface FlowSource {
  /** The next batch after `start` (undefined at the root), or undefined when caught up. */
  plan(start: SourceOffset | undefined, seq: number): Promise<PlannedSourceBatch | undefined>;
  load(start: SourceOffset | undefined, end: SourceOffset): Promise<LoadedSourceBatch>;
  /**
   * The batch between two offsets named rather than read, for an engine that reads it itself (the
   * Spark engine); absent for sources only DuckDB reads (Kafka, Kinesis, joins).
   */
  readonly plannedInput?: (start: SourceOffset | undefined, end: SourceOffset) => Promise<PlannedInput>;
  /** A stream-stream join's second stream's planned input, as `plannedInput` names `source`'s. */
  readonly plannedJoinedInput?: (start: SourceOffset | undefined, end: SourceOffset) => Promise<PlannedInput>;
  /**
   * Which of a batch's records the flow had read before a rewind moved it back (replay-frontier.ts),
   * for sources whose positions say so: auto_loader (by file) and Kafka (by offset). Absent: not
   * measured (a table of the pipeline is read at its new commits; Kinesis).
   */
  readonly replay?: SourceReplay;
}

export interface SourceReplay {
  /** Of the batch between `start` and `end` (`rowsIn` records read), those at or before `frontier`. */
  records(
    start: SourceOffset | undefined,
    end: SourceOffset,
    frontier: SourceOffset,
    rowsIn: number,
  ): Promise<number>;
  /** Whether `frontier` is still ahead of `end`: the next batch replays on. */
  behind(end: SourceOffset, frontier: SourceOffset): Promise<boolean>;
}

export interface FlowSourceContext {
  readonly pipelineId: string;
  readonly flowName: string;
  /** The dataset the flow writes. */
  readonly datasetName: string;
  readonly source: Source;
  readonly options: FlowOptions;
  /** The pipeline's own store (bucket root view), for source state. */
  readonly store: ObjectStore;
  /** The table of a dataset of this pipeline (a `stream` source). */
  readonly datasetTable: (dataset: string) => ObjectStore;
  /** The store rooted at an external location (`delta` and `auto_loader` paths). */
  readonly locate: (location: string) => ObjectStore;
  /** Kafka and Kinesis clients. */
  readonly eventStreams: EventStreams;
  /** The batch's sandbox, opened on first use. */
  readonly sandbox: () => Promise<Sandbox>;
  /** A `stream` or `delta` source reads the table's change data feed (`readsChangeFeed`). */
  readonly changeFeed?: boolean;
  /** A stream-stream join's second stream (a dataset of this pipeline), loaded as a view of its name. */
  readonly joinedStream?: string;
  /** Epoch milliseconds (when an auto_loader source last listed in full). @default Date.now */
  readonly clock?: () => number;
  /**
   * What is remembered of an auto_loader source's listings after each batch (incremental-listing.ts
   * step 2). @default this process's
   */
  readonly idleListings?: IdleListings;
}

export function createFlowSource(context: FlowSourceContext): FlowSource {
  const joined = context.joinedStream;
  if (joined === undefined) return singleSource(context);
  const { joinedStream: _, ...alone } = context;
  return joinedSource(
    singleSource(alone),
    tableSource({ ...alone, changeFeed: false }, context.datasetTable(joined), joined, joined),
  );
}

function singleSource(context: FlowSourceContext): FlowSource {
  const source = context.source;
  if (source.type === "auto_loader") return fileSource(context, source.format, source.schema);
  if (source.type === "kafka") {
    const topics = () => context.eventStreams.kafka(source);
    return eventStreamSource<KafkaOffset>(
      context,
      "kafka",
      kafkaBatchSource(context.flowName, source, context.options, topics),
    );
  }
  if (source.type === "kinesis") {
    const stream = () => context.eventStreams.kinesis(source);
    return eventStreamSource<KinesisOffset>(
      context,
      "kinesis",
      kinesisBatchSource(context.flowName, source, context.options, stream),
    );
  }
  const store = source.type === "stream" ? context.datasetTable(source.dataset) : context.locate(source.path);
  const upstream = source.type === "stream" ? source.dataset : source.path;
  return tableSource(context, store, upstream);
}

/**
 * A stream-stream join's two streams, moved together: a batch takes what is new in either (the other
 * loads an empty batch, its offset unchanged). Nothing runs until both have rows: until then the join
 * has nothing to match, and the rows wait in their tables. The joined stream loads first, since
 * `source`'s load also resets the batch's bad records.
 */
function joinedSource(main: FlowSource, joined: FlowSource): FlowSource {
  const asJoin = (offset: SourceOffset | undefined): JoinOffset | undefined => {
    if (offset === undefined) return undefined;
    if (offset.kind !== "join")
      throw new CheckpointStateError(
        `expected a stream-stream join offset, found ${offset.kind}: was the flow's join added? reset its checkpoint`,
      );
    return offset;
  };
  const planned = (side: FlowSource, part: "source" | "joined"): FlowSource["plannedInput"] => {
    const input = side.plannedInput;
    return input && ((start, end) => input(asJoin(start)?.[part], asJoin(end)![part]));
  };
  const plannedInput = planned(main, "source");
  const plannedJoinedInput = planned(joined, "joined");
  return {
    ...(plannedInput && plannedJoinedInput ? { plannedInput, plannedJoinedInput } : {}),
    async plan(start, seq) {
      const from = asJoin(start);
      const [left, right] = [await main.plan(from?.source, seq), await joined.plan(from?.joined, seq)];
      if (!left && !right) return undefined;
      const source = left?.end ?? from?.source;
      const other = right?.end ?? from?.joined;
      if (source === undefined || source.kind === "join" || other?.kind !== "table") return undefined;
      return {
        end: { kind: "join", source, joined: other },
        ...(left?.stateRef ? { stateRef: left.stateRef } : {}),
        caughtUp: (left?.caughtUp ?? true) && (right?.caughtUp ?? true),
        ...(left?.size ? { size: left.size } : {}),
      };
    },
    async load(start, end) {
      const from = asJoin(start);
      const until = asJoin(end)!;
      const right = await joined.load(from?.joined, until.joined);
      const combine = (left: LoadedSourceBatch): LoadedSourceBatch => {
        const newest = Math.max(
          left.newestUpstreamTimestamp ?? -Infinity,
          right.newestUpstreamTimestamp ?? -Infinity,
        );
        return {
          rowsIn: addedRows(left.rowsIn, right.rowsIn),
          badRecords: left.badRecords,
          ...(Number.isFinite(newest) ? { newestUpstreamTimestamp: newest } : {}),
          skippedRestores: [...left.skippedRestores, ...right.skippedRestores],
          ...(left.strict ? { strict: async () => combine(await left.strict!()) } : {}),
        };
      };
      return combine(await main.load(from?.source, until.source));
    },
  };
}

function tableSource(
  context: FlowSourceContext,
  store: ObjectStore,
  upstream: string,
  relation = MICRO_BATCH_NAME,
): FlowSource {
  const ref = {
    store,
    flow: context.flowName,
    upstream,
    ...(context.changeFeed ? { changeFeed: true } : {}),
  };
  const bounds = {
    maxFiles: context.options.max_files_per_batch ?? DEFAULT_MAX_FILES_PER_BATCH,
    ...(context.options.max_rows_per_batch !== undefined
      ? { maxRows: context.options.max_rows_per_batch }
      : {}),
    ...(context.options.max_bytes_per_batch !== undefined
      ? { maxBytes: context.options.max_bytes_per_batch }
      : {}),
  };
  const startingVersion = async (): Promise<number> => {
    if (context.options.starting_version !== undefined) return context.options.starting_version;
    const at = context.options.starting_timestamp;
    return at === undefined ? 0 : versionAtTimestamp(store, parseTimestamp(at)!);
  };
  let planned: PlannedTableBatch | undefined;
  // The batch just planned is read as planned; a resumed one is re-planned up to its end offset.
  const replanned = async (
    start: SourceOffset | undefined,
    end: SourceOffset,
  ): Promise<PlannedTableBatch> => {
    const until = asTable(end)!;
    const plan =
      planned && JSON.stringify(planned.end) === JSON.stringify(until)
        ? planned
        : await planTableSource(ref, asTable(start), { until }, start ? 0 : await startingVersion());
    if (!plan) {
      throw new SourceUnavailableError(
        `flow "${context.flowName}" planned a batch of ${upstream}, which no longer has a table: restore it, or fully refresh this flow's dataset`,
        { data: { flow: context.flowName, upstream } },
      );
    }
    return plan;
  };
  return {
    async plannedInput(start, end) {
      const plan = await replanned(start, end);
      return {
        kind: "table",
        upstream: context.source.type === "stream" ? { dataset: upstream } : { path: upstream },
        schemaString: plan.snapshot.metadata.schemaString,
        partitionColumns: plan.snapshot.metadata.partitionColumns,
        slices: plan.slices.map((slice) => ({
          path: plan.files.get(slice.path)!.path,
          partitionValues: plan.files.get(slice.path)!.partitionValues,
          firstRow: slice.firstRow,
          endRow: slice.endRow,
          fileRows: slice.fileRows,
        })),
        rows: plan.rows,
        ...(plan.changes
          ? {
              changeFeed: plan.changes.map((file) => ({
                path: file.path,
                partitionValues: file.partitionValues,
                version: file.version,
                timestamp: file.timestamp,
                changeType: file.changeType ?? null,
              })),
              changeFeedRetention: deletedFileRetention(plan.snapshot),
            }
          : {}),
        ...(plan.newestCommitTimestamp !== undefined
          ? { newestUpstreamTimestamp: plan.newestCommitTimestamp }
          : {}),
        skippedRestores: plan.skippedRestores,
      };
    },
    async plan(start) {
      const plan = await planTableSource(ref, asTable(start), bounds, start ? 0 : await startingVersion());
      if (!plan) return undefined;
      const moved = JSON.stringify(plan.end) !== JSON.stringify(plan.start);
      if (plan.slices.length === 0 && !moved) return undefined;
      planned = plan;
      const caughtUp = plan.end.rowsRead === 0 && plan.end.nextVersion === plan.snapshot.version + 1;
      return { end: plan.end, caughtUp, size: plan.size };
    },
    async load(start, end) {
      const plan = await replanned(start, end);
      const sandbox = await context.sandbox();
      const sql = await loadTableBatch(ref, plan, sandbox);
      // A view over the batch's files, copied into the sandbox: the query reads them in one pass.
      await sandbox.run(`CREATE OR REPLACE TEMP VIEW ${quoteIdentifier(relation)} AS ${sql}`);
      await sandbox.run(`CREATE OR REPLACE TEMP TABLE ${BAD_RECORDS_TABLE} (${BAD_RECORD_COLUMNS})`);
      // A change feed's files carry no row counts in the log: count what the view holds.
      const [counted] = plan.changes
        ? await sandbox.rows(`SELECT count(*)::BIGINT AS n FROM ${quoteIdentifier(relation)}`)
        : [];
      return {
        rowsIn: counted ? Number(counted["n"]) : plan.rows,
        badRecords: 0,
        ...(plan.newestCommitTimestamp !== undefined
          ? { newestUpstreamTimestamp: plan.newestCommitTimestamp }
          : {}),
        skippedRestores: plan.skippedRestores,
      };
    },
  };
}

/** Two batches' records read, a promise when either is one (its rejection handled until awaited). */
function addedRows(
  left: number | Promise<number>,
  right: number | Promise<number>,
): number | Promise<number> {
  if (typeof left === "number" && typeof right === "number") return left + right;
  const sum = Promise.all([left, right]).then(([a, b]) => a + b);
  sum.catch(() => undefined);
  return sum;
}

/** Files landed at once while a row bound counts records (landFiles fetches them in parallel). */
const LANDED_TOGETHER = 4;

/** This process's count of the listings after each batch it planned or listed after (incremental-listing.ts step 2). */
const IDLE_LISTINGS = new IdleListings();

function fileSource(
  context: FlowSourceContext,
  format: "json" | "csv" | "parquet",
  schema: Readonly<Record<string, string>> | undefined,
): FlowSource {
  const location = (context.source as { path: string }).path;
  const files = context.locate(location);
  const state = new FileSetState(context.store, context.pipelineId, context.flowName);
  const idleListings = context.idleListings ?? IDLE_LISTINGS;
  const landed = new Map<string, LandedFile>();
  const origin = { flow: context.flowName, dataset: context.datasetName, location };
  const land = async (keys: readonly string[]): Promise<LandedFile[]> => {
    const missing = keys.filter((key) => !landed.has(key));
    for (const file of await landFiles(files, await context.sandbox(), missing, origin, format))
      landed.set(file.key, file);
    return keys.map((key) => landed.get(key)!);
  };
  /**
   * The first of `keys` within `maxRows`, landed a few at a time to count their records: a row bound
   * lands what the batch takes (and one handful more), not every file the listing offers.
   */
  const landRows = async (keys: readonly string[], maxRows: number): Promise<string[]> => {
    const records: number[] = [];
    let rows = 0;
    for (let i = 0; i < keys.length && rows <= maxRows; i += LANDED_TOGETHER) {
      const handful = await Promise.all(
        (await land(keys.slice(i, i + LANDED_TOGETHER))).map((f) => f.records),
      );
      records.push(...handful);
      rows += handful.reduce((sum, count) => sum + count, 0);
    }
    return keys.slice(0, fitRows(records, maxRows));
  };
  /**
   * A batch of the row groups of Parquet file `key` from `from` that fit `maxBytes`; undefined when
   * the file has one row group or the whole file fits from the start (it is read whole, as any).
   */
  const planRowGroups = async (
    previous: FileSetOffset | undefined,
    key: string,
    from: number,
    seq: number,
    maxBytes: number,
    listing: FileSetOffset["listing"] = previous?.listing && { ...previous.listing, seq },
  ): Promise<PlannedSourceBatch | undefined> => {
    const groups = await readRowGroups(files, key, await context.sandbox(), origin);
    const to = fitRowGroups(groups, from, maxBytes);
    if (from === 0 && to === groups.length) return undefined;
    const last = to === groups.length;
    const processed = await state.load(previous);
    const appended = await state.append(previous, processed, seq, last ? [key] : [], listing);
    const end: FileSetOffset = { ...appended, slice: { key, from, to, of: groups.length } };
    const size = { files: 1, bytes: rowGroupBytes(groups, from, to), rowGroups: to - from };
    // The file's last range may not be the source's last file: the next plan lists again to know.
    return { end, stateRef: end.changelogs.at(-1)!, caughtUp: false, size };
  };
  const replay: SourceReplay = {
    async records(_start, end, frontier, rowsIn) {
      const before = await state.load(asFiles(frontier));
      const offset = asFiles(end)!;
      // A large file read by row groups joins the set with its last range; its earlier ones were read
      // before when the frontier holds the file, or is itself past this range of it.
      if (offset.slice) {
        const at = asFiles(frontier)!.slice;
        const read =
          before.has(offset.slice.key) || (at?.key === offset.slice.key && at.to >= offset.slice.to);
        return read ? rowsIn : 0;
      }
      const batch = await land(await state.batchFiles(offset));
      const records = await Promise.all(batch.filter((file) => before.has(file.key)).map((f) => f.records));
      const replayed = records.reduce((sum, count) => sum + count, 0);
      return Math.min(replayed, rowsIn);
    },
    async behind(end, frontier) {
      const [now, before] = await Promise.all([state.load(asFiles(end)), state.load(asFiles(frontier))]);
      for (const key of before) if (!now.has(key)) return true;
      return false;
    },
  };
  return {
    replay,
    async plannedInput(start, end) {
      const slice = asFiles(end)!.slice;
      if (slice)
        throw new FlowNotSupportedOnSparkError(
          context.flowName,
          `its batch reads row groups ${slice.from}-${slice.to - 1} of ${slice.key}, a file larger than the batch bound, which only DuckDB reads by row groups`,
        );
      const keys = await state.batchFiles(asFiles(end)!);
      return {
        kind: "files",
        location,
        keys,
        format,
        schema,
        ...(unmoved(start, end) ? { columnsOnly: true } : {}),
      };
    },
    async plan(start, seq) {
      const previous = asFiles(start);
      const maxBytes = context.options.max_bytes_per_batch;
      // A file read by row groups is read on to its end before any other.
      const open = previous?.slice && previous.slice.to < previous.slice.of ? previous.slice : undefined;
      if (open) return planRowGroups(previous!, open.key, open.to, seq, maxBytes ?? Infinity);
      const mode = context.options.use_incremental_listing ?? "auto";
      const startAfter = listingStart(mode, previous?.listing, seq);
      // The processed set and the listing are independent reads: both at once.
      const [processed, listed] = await Promise.all([
        state.load(previous),
        listSourceFiles(files, startAfter),
      ]);
      let full = startAfter === undefined;
      let fresh = planFileBatch(listed.keys(), processed, Number.MAX_SAFE_INTEGER);
      const now = context.clock?.() ?? Date.now();
      // The batch this listing follows, by its changelog's key (no other batch has it).
      const batch = previous?.changelogs.at(-1) ?? "";
      const idle = full ? undefined : idleListings.sinceFull(batch);
      let sinceFull = (idle ?? previous?.listing?.incremental ?? 0) + 1;
      const incremental = {
        foundNew: fresh.length > 0,
        sinceFull,
        counted: idle !== undefined,
        processed: processed.size,
      };
      if (!full && fullListingDue(mode, incremental)) {
        for (const [key, file] of await listSourceFiles(files)) listed.set(key, file);
        fresh = planFileBatch(listed.keys(), processed, Number.MAX_SAFE_INTEGER);
        full = true;
      }
      if (full) sinceFull = 0;
      const maxFiles = context.options.max_files_per_batch ?? DEFAULT_MAX_FILES_PER_BATCH;
      let chosen = fresh.slice(0, maxFiles);
      if (chosen.length === 0) {
        if (previous) idleListings.record(batch, sinceFull);
        return undefined;
      }
      const bytesOf = (key: string) => listed.get(key)?.size ?? 0;
      if (maxBytes !== undefined) chosen = fitBytes(chosen, bytesOf, maxBytes);
      const alone = chosen.length === 1 && maxBytes !== undefined && bytesOf(chosen[0]!) > maxBytes;
      if (alone && format !== "parquet")
        throw new FileAboveBatchBoundError(
          context.flowName,
          chosen[0]!,
          location,
          bytesOf(chosen[0]!),
          maxBytes,
          format,
        );
      if (alone) {
        const listing = listingAfter(previous?.listing, { full, fresh, chosen, sinceFull }, now, seq);
        const planned = await planRowGroups(previous, chosen[0]!, 0, seq, maxBytes, listing);
        if (planned) {
          idleListings.record(asFiles(planned.end)!.changelogs.at(-1)!, sinceFull);
          return planned;
        }
      }
      const maxRows = context.options.max_rows_per_batch;
      if (maxRows !== undefined) chosen = await landRows(chosen, maxRows);
      const listing = listingAfter(previous?.listing, { full, fresh, chosen, sinceFull }, now, seq);
      const end = await state.append(previous, processed, seq, chosen, listing);
      idleListings.record(end.changelogs.at(-1)!, sinceFull);
      const size = { files: chosen.length, bytes: chosen.reduce((sum, key) => sum + bytesOf(key), 0) };
      const taken = new Set(chosen);
      const left = fresh.filter((key) => !taken.has(key));
      const oldest = Math.min(...left.map((key) => listed.get(key)?.lastModified ?? now));
      const backlog = {
        files: left.length,
        bytes: left.reduce((sum, key) => sum + bytesOf(key), 0),
        seconds: left.length === 0 ? 0 : Math.max(0, now - oldest) / 1000,
      };
      return { end, stateRef: end.changelogs.at(-1)!, caughtUp: left.length === 0, size, backlog };
    },
    async load(start, end) {
      const offset = asFiles(end)!;
      const local = offset.slice
        ? [await landRowGroups(files, offset.slice, await context.sandbox(), origin)]
        : await land(await state.batchFiles(offset));
      const read = async (lazy: boolean): Promise<LoadedSourceBatch> => {
        const sandbox = await context.sandbox();
        const badRecords = await readRecords(sandbox, local, {
          flow: context.flowName,
          format,
          ...(schema ? { schema } : {}),
          goodTable: MICRO_BATCH_NAME,
          badTable: BAD_RECORDS_TABLE,
          lazy,
        });
        if (lazy) {
          // The files' lines are counted while the query reads them (auto-loader-source.ts).
          const rowsIn = Promise.all(local.map((file) => file.records)).then((counts) =>
            counts.reduce((sum, count) => sum + count, 0),
          );
          rowsIn.catch(() => undefined); // awaited after the commit; a failed query never awaits it
          return { rowsIn, badRecords, skippedRestores: [], strict: () => read(false) };
        }
        const [row] = await sandbox.rows(
          `SELECT count(*)::BIGINT AS n FROM ${quoteIdentifier(MICRO_BATCH_NAME)}`,
        );
        return { rowsIn: Number(row?.["n"] ?? 0) + badRecords, badRecords, skippedRestores: [] };
      };
      if (unmoved(start, end)) {
        await read(false);
        await keepColumnsOnly(await context.sandbox(), [MICRO_BATCH_NAME, BAD_RECORDS_TABLE]);
        return { rowsIn: 0, badRecords: 0, skippedRestores: [] };
      }
      // JSON is read in one pass with the query; other formats are checked record by record first.
      if (format !== "json") return read(false);
      try {
        return await read(true);
      } catch (error) {
        // DuckDB may meet the malformed record already while binding the view.
        if (!isMalformedInputError(error)) throw error;
        return read(false);
      }
    },
  };
}

/**
 * Whether a file source's offset did not move over a batch: a stream-stream join's batch whose new
 * rows are all the joined stream's. A files offset names the files of the batch that reached it, so
 * such a batch reads them for their columns only, never their rows again.
 */
function unmoved(start: SourceOffset | undefined, end: SourceOffset): boolean {
  return start !== undefined && isDeepStrictEqual(start, end);
}

/** Empties the sandbox's relations `names` (a table or a view each), keeping their columns. */
async function keepColumnsOnly(sandbox: Sandbox, names: readonly string[]): Promise<void> {
  for (const name of names) {
    const relation = quoteIdentifier(name);
    const empty = quoteIdentifier(`${name}__columns`);
    await sandbox.run(`CREATE OR REPLACE TEMP TABLE ${empty} AS SELECT * FROM ${relation} LIMIT 0`);
    const [kind] = await sandbox.rows(
      `SELECT table_type FROM information_schema.tables WHERE table_name = ${quoteLiteral(name)}`,
    );
    await sandbox.run(`DROP ${kind?.["table_type"] === "VIEW" ? "VIEW" : "TABLE"} ${relation}`);
    await sandbox.run(`ALTER TABLE ${empty} RENAME TO ${relation}`);
  }
}

/** A Kafka or Kinesis batch source over its own kind of offset. */
interface EventBatches<Offset extends SourceOffset> {
  plan(
    start: Offset | undefined,
  ): Promise<{ end: Offset; caughtUp: boolean; records?: number; backlog?: SourceBacklog } | undefined>;
  load(
    start: Offset | undefined,
    end: Offset,
    sandbox: Sandbox,
    tables: { good: string; bad: string },
  ): Promise<{ rows: number; bad: number; newestTimestamp?: number }>;
  /** The batch as the Spark engine reads it (Kafka; Kinesis runs on DuckDB only). */
  plannedInput?(start: Offset | undefined, end: Offset): PlannedInput;
}

/** Kafka and Kinesis: a batch is a range of positions, loaded as a temp table of decoded records. */
function eventStreamSource<Offset extends KafkaOffset | KinesisOffset>(
  context: FlowSourceContext,
  kind: Offset["kind"],
  batches: EventBatches<Offset>,
): FlowSource {
  const offset = (value: SourceOffset | undefined): Offset | undefined => {
    if (value === undefined) return undefined;
    if (value.kind !== kind)
      throw new CheckpointStateError(
        `expected a ${kind} offset, found ${value.kind}: was the flow's source changed? reset its checkpoint`,
      );
    return value as Offset;
  };
  const replay: SourceReplay | undefined =
    kind === "kafka"
      ? {
          records: async (start, end, frontier, rowsIn) =>
            Math.min(
              rowsIn,
              kafkaRecordsReplayed(
                offset(start) as KafkaOffset,
                offset(end) as KafkaOffset,
                frontier as KafkaOffset,
              ),
            ),
          behind: async (end, frontier) => kafkaBehind(offset(end) as KafkaOffset, frontier as KafkaOffset),
        }
      : undefined;
  const named = batches.plannedInput?.bind(batches);
  return {
    ...(replay ? { replay } : {}),
    ...(named ? { plannedInput: async (start, end) => named(offset(start), offset(end)!) } : {}),
    async plan(start) {
      const planned = await batches.plan(offset(start));
      if (!planned) return undefined;
      const size = planned.records !== undefined ? { size: { records: planned.records } } : {};
      const backlog = planned.backlog ? { backlog: planned.backlog } : {};
      return { end: planned.end, caughtUp: planned.caughtUp, ...size, ...backlog };
    },
    async load(start, end) {
      const sandbox = await context.sandbox();
      const loaded = await batches.load(offset(start), offset(end)!, sandbox, {
        good: MICRO_BATCH_NAME,
        bad: BAD_RECORDS_TABLE,
      });
      return {
        rowsIn: loaded.rows,
        badRecords: loaded.bad,
        ...(loaded.newestTimestamp !== undefined ? { newestUpstreamTimestamp: loaded.newestTimestamp } : {}),
        skippedRestores: [],
      };
    },
  };
}

function asTable(offset: SourceOffset | undefined): TableOffset | undefined {
  if (offset === undefined) return undefined;
  if (offset.kind !== "table")
    throw new CheckpointStateError(
      `expected a table offset, found ${offset.kind}: was the flow's source changed? reset its checkpoint`,
    );
  return offset;
}

function asFiles(offset: SourceOffset | undefined): FileSetOffset | undefined {
  if (offset === undefined) return undefined;
  if (offset.kind !== "files")
    throw new CheckpointStateError(
      `expected a file-set offset, found ${offset.kind}: was the flow's source changed? reset its checkpoint`,
    );
  return offset;
}
