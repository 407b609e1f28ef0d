import { CONFIGURATION_KEYS, DEFAULT_ENGINE } from "../../pipeline/pipeline-settings.ts";
import type { BatchEngine, EngineSetting } from "../../pipeline/pipeline-settings.ts";
import type {
  FlowDefinition,
  PipelineDefinition,
  StreamingTableDefinition,
} from "../../pipeline/definition-schema.ts";
import { isWord, significant, tokenize } from "../../sql/spark-sql-tokens.ts";
import type { BatchSize } from "../batch-size.ts";
import type { DatasetCatalog } from "../dataset-catalog.ts";
import { sparkKafkaUnsupported } from "./spark-kafka-input.ts";
import { sourceColumnRefusal } from "./spark-source-columns.ts";

/**
 * Which engine runs a planned batch (pure): the pipeline's `pipelines.engine` (or the update's
 * override), and for `auto` the batch's planned size, or that DuckDB failed it for its size. A flow the Spark engine cannot run is refused
 * when Spark was asked for, and stays on DuckDB under `auto` (a size rule, not a demand).
 *
 * What the Spark engine runs today: streaming flows, plain or AUTO CDC (the flow's SQL, the
 * dataset's expectations and the events' kinds on Spark; the apply by key in Ebb), every stateful
 * operator over Ebb's state layout (watermark, deduplication, windows, stream-stream joins), from `auto_loader` files, a `kafka` topic's planned offsets (spark-kafka-input.ts) or a
 * `stream`/`delta` table (its appends, or its change feed: the planned files, ebb_spark_change_feed.py), failing on malformed records (no quarantine), into a
 * table (partitioned or not), also reading other datasets of the pipeline (a stream-static join:
 * each table read as the files of the version Ebb planned, spark-snapshot-reads.ts; a view as its
 * SQL). A materialized view's full recompute runs on Spark too (view-engine-choice.ts); its
 * incremental refresh stays on DuckDB. Their SQL
 * runs as Spark SQL: a pipeline that says `pipelines.sqlDialect = "spark"` is taken as written; one in
 * DuckDB's dialect (the default) runs on Spark only when it uses none of DuckDB's own syntax (below).
 * Functions both dialects know run with Spark's semantics.
 */

/**
 * The engine, or a refusal (Spark was asked for, and cannot run it) with why and, when the way out
 * is not DuckDB or Spark SQL, what the user can change (`wayOut`). Under `auto`, a batch Spark cannot
 * run stays on DuckDB with why (`keptOffSpark`), for the event that names its engine.
 */
export type EngineChoice =
  | { readonly engine: "spark" }
  | { readonly engine: "duckdb"; readonly keptOffSpark?: string }
  | { readonly engine: "refused"; readonly reason: string; readonly wayOut?: string };

/** Why Spark cannot run something, and what the user can change so it can (beside DuckDB). */
export interface SparkRefusal {
  readonly reason: string;
  readonly wayOut?: string;
}

export interface EngineQuestion {
  readonly setting: EngineSetting | undefined;
  /** The update's own engine (`engine` of the start-update request), over the pipeline's. */
  readonly override?: BatchEngine;
  readonly size: BatchSize | undefined;
  readonly pipeline: PipelineDefinition;
  readonly dataset: StreamingTableDefinition;
  readonly flow: FlowDefinition;
  /**
   * The views the flow's SQL reads (snapshot reads, catalog.snapshotReads): the job runs their SQL
   * too. Tables read go to the job as their planned files (spark-snapshot-reads.ts).
   */
  readonly readViews: readonly { readonly name: string; readonly sql: string }[];
  /**
   * The bytes a batch takes on the task function (its default byte bound, task-sizing.ts): `auto`'s
   * threshold when the pipeline sets none, since a batch above it is one the function would split
   * (or, one file, refuse).
   */
  readonly functionBatchBytes?: number;
  /**
   * Why DuckDB failed this batch (or the one it re-plans) for its size: under `auto` it runs on
   * Spark whatever its size (batch-replan.ts).
   */
  readonly outgrewDuckDb?: string;
}

export function chooseEngine(question: EngineQuestion): EngineChoice {
  const setting = question.override
    ? ({ kind: "fixed", engine: question.override } as const)
    : (question.setting ?? DEFAULT_ENGINE);
  if (setting.kind === "fixed" && setting.engine === "duckdb") return { engine: "duckdb" };
  const unsupported = sparkRefusal(question);
  if (setting.kind === "fixed") return unsupported ? refused(unsupported) : { engine: "spark" };
  if (unsupported) return { engine: "duckdb", keptOffSpark: unsupported.reason };
  if (question.outgrewDuckDb !== undefined) return { engine: "spark" };
  if (!aboveThreshold(setting, question.size, question.functionBatchBytes)) return { engine: "duckdb" };
  return { engine: "spark" };
}

/**
 * Whether a batch that failed for its size on DuckDB goes to Spark whole (once) rather than being
 * halved: under `auto` (not an update's own engine) for a flow Spark can run. The caller knows
 * whether Spark is configured; without it the halving stays.
 */
export function outgrownBatchGoesToSpark(question: Omit<EngineQuestion, "size">): boolean {
  if (question.override) return false;
  const setting = question.setting ?? DEFAULT_ENGINE;
  return setting.kind === "auto" && sparkRefusal(question) === undefined;
}

/**
 * Whether the flow's batches may run on Spark (the update's or the pipeline's engine is Spark, or
 * `auto`'s may be): then a batch is planned as the flow's own options take it, before the task
 * function's byte bound would split it (micro-batch.ts): Spark is not bounded by the function, and
 * `auto` compares the whole batch with its threshold.
 */
export function mayRunOnSpark(question: Omit<EngineQuestion, "size">): boolean {
  if (question.override) return question.override === "spark";
  const setting = question.setting ?? DEFAULT_ENGINE;
  if (setting.kind === "fixed") return setting.engine === "spark";
  return sparkRefusal(question) === undefined;
}

/** A refusal as the engine choice says it. */
export function refused(refusal: SparkRefusal): EngineChoice {
  return { engine: "refused", reason: refusal.reason, ...(refusal.wayOut ? { wayOut: refusal.wayOut } : {}) };
}

export function aboveThreshold(
  setting: Extract<EngineSetting, { kind: "auto" }>,
  size: BatchSize | undefined,
  functionBatchBytes: number | undefined,
): boolean {
  if (size === undefined) return false;
  if (setting.minBytes === undefined && setting.minRecords === undefined)
    return functionBatchBytes !== undefined && (size.bytes ?? 0) > functionBatchBytes;
  const bytes = setting.minBytes !== undefined && (size.bytes ?? 0) >= setting.minBytes;
  const records = setting.minRecords !== undefined && (size.records ?? 0) >= setting.minRecords;
  return bytes || records;
}

/** Why the Spark engine cannot run this flow, or undefined when it can. */
export function sparkUnsupported(question: Omit<EngineQuestion, "setting" | "size">): string | undefined {
  return sparkRefusal(question)?.reason;
}

/** `sparkUnsupported`, with the way out when it is not DuckDB or Spark SQL. */
export function sparkRefusal(question: Omit<EngineQuestion, "setting" | "size">): SparkRefusal | undefined {
  const typed = sourceColumnRefusal(question.flow);
  if (typed) return typed;
  const reason = sparkUnsupportedSql(question);
  return reason === undefined ? undefined : { reason };
}

function sparkUnsupportedSql(question: Omit<EngineQuestion, "setting" | "size">): string | undefined {
  const { flow, dataset } = question;
  // Every stateful operator (watermark, deduplication, windows, stream-stream joins) runs on Spark over Ebb's state layout (spark-state.ts).
  const source = flow.source;
  if (source.type === "kinesis")
    return "kinesis sources run on DuckDB only (Spark's Kinesis connector is a streaming source, not a reader of a planned range of sequence numbers)";
  const kafka = source.type === "kafka" ? sparkKafkaUnsupported(source) : undefined;
  if (kafka) return kafka;
  if ((flow.options?.bad_records ?? "fail") !== "fail")
    return `bad_records "${flow.options?.bad_records}" runs on DuckDB only, for now (Spark fails the batch on a malformed record)`;
  if (writtenInSpark(question.pipeline)) return undefined;
  const duckOnly = duckDbOnlySyntax(flow.sql);
  if (duckOnly) return `its SQL is written for DuckDB (${duckOnly})`;
  const view = duckDbOnlyView(question.readViews);
  if (view) return view;
  // The job evaluates the dataset's expectations in Spark SQL too.
  for (const expectation of dataset.expectations ?? []) {
    const inCondition = duckDbOnlySyntax(expectation.condition);
    if (inCondition)
      return `expectation "${expectation.name}" of dataset "${dataset.name}" is written for DuckDB (${inCondition})`;
  }
  // And an AUTO CDC flow's event conditions.
  for (const [setting, condition] of [
    ["apply_as_deletes", flow.auto_cdc?.apply_as_deletes],
    ["apply_as_truncates", flow.auto_cdc?.apply_as_truncates],
  ] as const) {
    const inCondition = condition === undefined ? undefined : duckDbOnlySyntax(condition);
    if (inCondition) return `its ${setting} is written for DuckDB (${inCondition})`;
  }
  return undefined;
}

/** Whether the pipeline's SQL is Spark SQL as written (`pipelines.sqlDialect = "spark"`). */
export function writtenInSpark(pipeline: PipelineDefinition): boolean {
  return pipeline.configuration?.[CONFIGURATION_KEYS.sqlDialect]?.trim().toLowerCase() === "spark";
}

/** Why a view read (run on Spark as its SQL) keeps the query on DuckDB, or undefined. */
export function duckDbOnlyView(views: EngineQuestion["readViews"]): string | undefined {
  for (const view of views) {
    const duckOnly = duckDbOnlySyntax(view.sql);
    if (duckOnly) return `view ${view.name}, which it reads, is written for DuckDB (${duckOnly})`;
  }
  return undefined;
}

/** DuckDB syntax and functions Spark SQL has not (or has with another meaning). */
const DUCKDB_ONLY_FUNCTIONS = new Set([
  "strftime",
  "strptime",
  "epoch",
  "epoch_ms",
  "list_value",
  "list_contains",
  "struct_pack",
  "regexp_matches",
  "string_split",
  "columns",
  "read_json",
  "read_csv",
  "read_parquet",
  "try_strptime",
  "printf",
  "len",
]);

/** The first DuckDB-only construct of `sql`, described, or undefined when it has none. */
export function duckDbOnlySyntax(sql: string): string | undefined {
  const tokens = tokenize(sql).filter(significant);
  for (let i = 0; i < tokens.length; i++) {
    const token = tokens[i]!;
    if (token.kind === "symbol" && token.text === "::") return "a :: cast; Spark writes CAST(x AS type)";
    if (isWord(token, "EXCLUDE") && tokens[i - 1]?.text === "*")
      return "SELECT * EXCLUDE; Spark writes SELECT * EXCEPT";
    const next = tokens[i + 1];
    if (token.kind === "word" && next?.text === "(" && DUCKDB_ONLY_FUNCTIONS.has(token.text.toLowerCase()))
      return `the DuckDB function ${token.text}()`;
  }
  return undefined;
}

/** The views `dataset`'s query (or its flow's) reads, in the order the job registers them. */
export function readViewsOf(
  catalog: Pick<DatasetCatalog, "snapshotReads">,
  dataset: string,
  flow?: string,
): { readonly name: string; readonly sql: string }[] {
  return catalog.snapshotReads(dataset, flow).flatMap((read) => (read.kind === "view" ? [read] : []));
}
