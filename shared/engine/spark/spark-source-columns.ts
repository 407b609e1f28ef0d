import type { FlowDefinition } from "../../pipeline/definition-schema.ts";
import type { SparkRefusal } from "./engine-choice.ts";

/**
 * Whether the Spark job can read a flow's declared source columns (an `auto_loader` or `kafka`
 * `schema`, a Kafka value's fields), decided when the batch is planned, not found when the job runs.
 *
 * The job turns each declared type into Spark DDL as written (ebb_spark_batch.py `spark_type`):
 * the names of `SPARK_TYPES`, DECIMAL/NUMERIC with their precision, and a list `T[]` of those as
 * `ARRAY<T>`. Spark's CSV reader takes no ARRAY column (DuckDB's does, from `[a, b]`).
 */

/** The declared names the job maps (ebb_spark_batch.py DUCK_TO_SPARK_TYPES), upper case. */
const SPARK_TYPES = new Set([
  "VARCHAR",
  "TEXT",
  "STRING",
  "BIGINT",
  "INT8",
  "LONG",
  "INTEGER",
  "INT",
  "INT4",
  "SMALLINT",
  "TINYINT",
  "DOUBLE",
  "FLOAT8",
  "FLOAT",
  "REAL",
  "BOOLEAN",
  "BOOL",
  "DATE",
  "TIMESTAMP",
  "TIMESTAMPTZ",
  "TIMESTAMP WITH TIME ZONE",
]);

/** How the job reads a declared column type: as a scalar, as a list (`ARRAY`), or not at all. */
export function sparkColumnKind(declared: string): "scalar" | "list" | undefined {
  const text = declared.trim().toUpperCase();
  if (text.endsWith("[]")) return sparkColumnKind(text.slice(0, -2)) === undefined ? undefined : "list";
  if (text.startsWith("DECIMAL") || text.startsWith("NUMERIC")) return "scalar";
  return SPARK_TYPES.has(text) ? "scalar" : undefined;
}

/** Why the job cannot read the flow's declared source columns, or undefined when it can. */
export function sourceColumnRefusal(flow: FlowDefinition): SparkRefusal | undefined {
  const source = flow.source;
  if (source.type !== "auto_loader" && source.type !== "kafka") return undefined;
  const schema = source.schema;
  if (!schema) return undefined;
  const csv = source.type === "auto_loader" && source.format === "csv";
  for (const [column, declared] of Object.entries(schema)) {
    const kind = sparkColumnKind(declared);
    if (kind === undefined)
      return {
        reason: `its source's column ${column} is declared ${declared}, a type the Spark job does not read`,
        wayOut: `or declare ${column} as VARCHAR and convert it in the flow's SQL`,
      };
    if (csv && kind === "list")
      return {
        reason: `its source's column ${column} is declared ${declared}, and Spark reads no list from a CSV file`,
        wayOut: `or declare ${column} as VARCHAR and split it in the flow's SQL`,
      };
  }
  return undefined;
}
