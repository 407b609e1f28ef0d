import { sparkConditionToDuckDb, sparkToDuckDb } from "../sql/spark-to-duckdb.ts";
import { SqlUnsupportedError } from "../sql/errors.ts";
import type { PipelineDefinition } from "./definition-schema.ts";
import type { DefinitionIssue } from "./errors.ts";

/**
 * A definition's SQL in the dialect it is written in (`pipelines.sqlDialect`): `duckdb` runs as
 * written; `spark` is translated here, once per definition version at validation, to the DuckDB SQL
 * the engine runs (README "The SQL dialect"). A construct Ebb cannot run with Spark's answer is an
 * `UNSUPPORTED_SQL` issue naming its place: the SQL's path, line and column.
 */

export const SQL_DIALECTS = ["spark", "duckdb"] as const;
export type SqlDialect = (typeof SQL_DIALECTS)[number];

/** Code of the issue a refused construct gives. */
export const UNSUPPORTED_SQL = "UNSUPPORTED_SQL";

export interface TranslatedDefinition {
  readonly definition: PipelineDefinition;
  readonly issues: readonly DefinitionIssue[];
}

export function translateDefinition(
  definition: PipelineDefinition,
  dialect: SqlDialect,
): TranslatedDefinition {
  if (dialect === "duckdb") return { definition, issues: [] };
  const issues: DefinitionIssue[] = [];
  const translate = (text: string, path: string, what: string, condition = false): string => {
    try {
      return condition ? sparkConditionToDuckDb(text) : sparkToDuckDb(text);
    } catch (error) {
      if (!(error instanceof SqlUnsupportedError)) throw error;
      issues.push({ path, code: UNSUPPORTED_SQL, message: `${what}, ${error.message}` });
      return text;
    }
  };
  // An expectation's condition is Spark SQL too: translated, or refused naming the expectation.
  const expectations = (dataset: PipelineDefinition["datasets"][number], d: number) =>
    dataset.type === "view" || dataset.expectations === undefined
      ? {}
      : {
          expectations: dataset.expectations.map((expectation, e) => ({
            ...expectation,
            condition: translate(
              expectation.condition,
              `datasets[${d}].expectations[${e}].condition`,
              `condition of expectation "${expectation.name}" of dataset "${dataset.name}"`,
              true,
            ),
          })),
        };
  const datasets = definition.datasets.map((dataset, d) => {
    if (dataset.type !== "streaming_table") {
      return {
        ...dataset,
        sql: translate(dataset.sql, `datasets[${d}].sql`, `SQL of dataset "${dataset.name}"`),
        ...expectations(dataset, d),
      };
    }
    const flows = dataset.flows.map((flow, f) => {
      const at = `datasets[${d}].flows[${f}]`;
      const auto = flow.auto_cdc;
      return {
        ...flow,
        sql: translate(flow.sql, `${at}.sql`, `SQL of flow "${flow.name}"`),
        ...(flow.owns === undefined
          ? {}
          : { owns: translate(flow.owns, `${at}.owns`, `owns of flow "${flow.name}"`, true) }),
        ...(auto === undefined
          ? {}
          : {
              auto_cdc: {
                ...auto,
                ...(auto.apply_as_deletes === undefined
                  ? {}
                  : {
                      apply_as_deletes: translate(
                        auto.apply_as_deletes,
                        `${at}.auto_cdc.apply_as_deletes`,
                        `apply_as_deletes of flow "${flow.name}"`,
                        true,
                      ),
                    }),
                ...(auto.apply_as_truncates === undefined
                  ? {}
                  : {
                      apply_as_truncates: translate(
                        auto.apply_as_truncates,
                        `${at}.auto_cdc.apply_as_truncates`,
                        `apply_as_truncates of flow "${flow.name}"`,
                        true,
                      ),
                    }),
              },
            }),
      };
    });
    return { ...dataset, flows, ...expectations(dataset, d) };
  });
  return { definition: { ...definition, datasets } as PipelineDefinition, issues };
}
