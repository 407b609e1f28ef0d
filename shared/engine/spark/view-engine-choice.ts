import { DEFAULT_ENGINE } from "../../pipeline/pipeline-settings.ts";
import type { BatchEngine, EngineSetting } from "../../pipeline/pipeline-settings.ts";
import type { MaterializedViewDefinition, PipelineDefinition } from "../../pipeline/definition-schema.ts";
import {
  aboveThreshold,
  duckDbOnlySyntax,
  duckDbOnlyView,
  refused,
  writtenInSpark,
  type EngineChoice,
  type SparkRefusal,
} from "./engine-choice.ts";
import type { DescribedKey } from "./spark-view-schema.ts";

/**
 * Which engine recomputes a materialized view (pure), as engine-choice.ts chooses a batch's: the
 * pipeline's `pipelines.engine` or the update's own engine, and for `auto` the view's planned input
 * (the bytes of the data files of the table versions it reads) against the threshold.
 *
 * Only a full recompute runs on Spark (spark-view-refresh.ts), that of a view kept incrementally
 * included (incremental-view.ts: a GROUP BY of decomposable aggregates over one table): the job
 * writes its partials in Ebb's state layout beside its rows (spark-view-state.ts). An incremental
 * refresh (the rows the input gained, merged into the kept partials) stays on DuckDB whatever the
 * engine: it reads only what was gained. A view whose SQL (or a view it reads, or an expectation) is
 * written for DuckDB is refused when Spark was asked for, and stays on DuckDB under `auto`; so is a
 * view kept incrementally whose grouping key has a type whose JSON Spark spells otherwise than
 * DuckDB (`SPARK_VIEW_KEY_TYPES`): its partials are bucketed by a hash of the key's JSON, so the
 * next incremental refresh on DuckDB would look the key up in another bucket. The keys' types come
 * from DuckDB (spark-view-schema.ts), asked only when the choice would otherwise be Spark.
 */

/**
 * The DuckDB types of a grouping key whose JSON Spark's `to_json` spells as DuckDB's does (the
 * interop suite's spark-cdc-tie.test.ts proves each over a corpus; ebb_spark_view.py allows these).
 * DOUBLE is not one (1e20 and NaN are spelled otherwise, the same test shows), nor DECIMAL, FLOAT, TIMESTAMPTZ.
 */
export const SPARK_VIEW_KEY_TYPES: ReadonlySet<string> = new Set([
  "BIGINT",
  "INTEGER",
  "SMALLINT",
  "TINYINT",
  "VARCHAR",
  "BOOLEAN",
  "TIMESTAMP",
  "DATE",
]);

export interface ViewEngineQuestion {
  readonly setting: EngineSetting | undefined;
  readonly override?: BatchEngine | undefined;
  readonly pipeline: PipelineDefinition;
  readonly view: MaterializedViewDefinition;
  /** The views its SQL reads (their SQL runs in the job too). */
  readonly readViews: readonly { readonly name: string; readonly sql: string }[];
  /** Whether this refresh merges the rows its input gained into the kept partials (incremental-view.ts). */
  readonly incrementalRefresh: boolean;
  /** The bytes of the data files it reads, at the versions planned. */
  readonly inputBytes: number;
  /** `auto`'s threshold when the pipeline sets none (engine-choice.ts). */
  readonly functionBatchBytes?: number | undefined;
  /** A view kept incrementally: its grouping keys' DuckDB types, once described (spark-view-schema.ts). */
  readonly keys?: readonly DescribedKey[] | undefined;
}

export function chooseViewEngine(question: ViewEngineQuestion): EngineChoice {
  const setting = question.override
    ? ({ kind: "fixed", engine: question.override } as const)
    : (question.setting ?? DEFAULT_ENGINE);
  if (question.incrementalRefresh) return { engine: "duckdb" };
  if (setting.kind === "fixed" && setting.engine === "duckdb") return { engine: "duckdb" };
  const unsupported = viewSparkRefusal(question);
  if (setting.kind === "fixed") return unsupported ? refused(unsupported) : { engine: "spark" };
  if (unsupported) return { engine: "duckdb", keptOffSpark: unsupported.reason };
  const size = { files: 0, bytes: question.inputBytes };
  return aboveThreshold(setting, size, question.functionBatchBytes)
    ? { engine: "spark" }
    : { engine: "duckdb" };
}

/** Why the Spark engine cannot recompute the view, or undefined when it can. */
export function viewSparkUnsupported(
  question: Pick<ViewEngineQuestion, "pipeline" | "view" | "readViews">,
): string | undefined {
  return viewSparkRefusal(question)?.reason;
}

/** `viewSparkUnsupported`, its grouping keys' types included when known, with the way out. */
export function viewSparkRefusal(
  question: Pick<ViewEngineQuestion, "pipeline" | "view" | "readViews" | "keys">,
): SparkRefusal | undefined {
  for (const key of question.keys ?? []) {
    if (SPARK_VIEW_KEY_TYPES.has(key.duckType.trim().toUpperCase())) continue;
    return {
      reason: `its grouping key ${key.sql} is of type ${key.duckType}, whose JSON Spark spells otherwise than DuckDB (the kept partials are bucketed by a hash of the key's JSON)`,
      wayOut: `or cast the key in its SQL to a type Spark spells alike (e.g. CAST(${key.sql} AS VARCHAR))`,
    };
  }
  const reason = viewSparkUnsupportedSql(question);
  return reason === undefined ? undefined : { reason };
}

function viewSparkUnsupportedSql(
  question: Pick<ViewEngineQuestion, "pipeline" | "view" | "readViews">,
): string | undefined {
  if (writtenInSpark(question.pipeline)) return undefined;
  const { view } = question;
  const duckOnly = duckDbOnlySyntax(view.sql);
  if (duckOnly) return `its SQL is written for DuckDB (${duckOnly})`;
  const read = duckDbOnlyView(question.readViews);
  if (read) return read;
  for (const expectation of view.expectations ?? []) {
    const inCondition = duckDbOnlySyntax(expectation.condition);
    if (inCondition)
      return `expectation "${expectation.name}" of materialized view "${view.name}" is written for DuckDB (${inCondition})`;
  }
  return undefined;
}
