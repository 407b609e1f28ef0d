import { quoteLiteral } from "../duck/sql-text.ts";
import type { ExpectationDefinition } from "../pipeline/definition-schema.ts";
import { ExpectationConditionError, ExpectationViolationError } from "./errors.ts";
import type { Sandbox } from "./sandbox.ts";

/**
 * A dataset's expectations (Databricks' data quality checks), applied to the rows one flow is about to
 * write — a streaming table's micro-batch (before its append, or before the MERGE of an AUTO CDC flow)
 * or a materialized view's refresh — in the sandbox that produced them:
 *
 * 1. Check each condition is one expression over the rows' columns and a boolean (an unknown column
 *    names the dataset, the expectation and the column).
 * 2. Keep the rows once, each with one flag per expectation: whether its condition is TRUE. A NULL
 *    result is not TRUE, so it counts as failed (and `drop` removes the row), as Spark's filter does.
 * 3. Count passed and failed rows per expectation; any `fail` expectation with a failed row stops the
 *    batch here, before anything is written, naming one failing row.
 * 4. The rows to write: all of them, less those failing a `drop` expectation.
 *
 * The counts are the event log's `details.flow_progress.data_quality`, shaped as Databricks shapes it.
 */

/** One expectation's counts, as Databricks' event log has them. */
export interface ExpectationMetrics {
  readonly name: string;
  readonly dataset: string;
  readonly passed_records: number;
  readonly failed_records: number;
}

/** `details.flow_progress.data_quality` of a batch with expectations. */
export interface DataQuality {
  readonly dropped_records: number;
  readonly expectations: readonly ExpectationMetrics[];
}

export interface ExpectationTarget {
  readonly dataset: string;
  readonly flow: string;
  readonly expectations: readonly ExpectationDefinition[] | undefined;
}

export interface CheckedRows {
  /** Engine SQL over the sandbox giving the rows to write. */
  readonly rowsSql: string;
  /** Undefined when the dataset has no expectations. */
  readonly quality?: DataQuality;
  /** The rows `rowsSql` gives. */
  readonly rows?: number;
}

/** The sandbox table holding a batch's rows and their expectation flags (step 2). */
const CHECKED = "__ebb_expected";

/** The flag column of expectation `index`. */
const flag = (index: number) => `__ebb_expect_${index}`;

/** Steps 1-4 over `rowsSql` (engine SQL in `sandbox`, e.g. a `checkedQuery`). */
export async function applyExpectations(
  sandbox: Sandbox,
  target: ExpectationTarget,
  rowsSql: string,
): Promise<CheckedRows> {
  const expectations = target.expectations ?? [];
  if (expectations.length === 0) return { rowsSql };

  // 1. Each condition alone, so a failure names its expectation.
  const conditions: string[] = [];
  for (const expectation of expectations) {
    const what = `expectation "${expectation.name}" of dataset "${target.dataset}"`;
    const condition = await sandbox.checkedCondition(expectation.condition, what);
    await checkApplies(sandbox, target, expectation, condition, rowsSql);
    conditions.push(condition);
  }

  // 2. The rows, once, with their flags.
  const flags = conditions.map((condition, i) => `(${condition}) IS TRUE AS ${flag(i)}`);
  await sandbox.run(
    `CREATE OR REPLACE TEMP TABLE ${CHECKED} AS SELECT *, ${flags.join(", ")} FROM (${rowsSql})`,
  );

  // 3. Counts, and the first `fail` expectation a row failed.
  const dropping = expectations.flatMap((e, i) => (e.on_violation === "drop" ? [flag(i)] : []));
  const kept = dropping.length === 0 ? "true" : dropping.join(" AND ");
  const [counted] = await sandbox.rows(
    `SELECT count(*)::BIGINT AS total, count_if(${kept})::BIGINT AS kept, ` +
      expectations.map((_, i) => `count_if(${flag(i)})::BIGINT AS passed_${i}`).join(", ") +
      ` FROM ${CHECKED}`,
  );
  const total = Number(counted?.["total"] ?? 0);
  const metrics = expectations.map((expectation, i) => {
    const passed = Number(counted?.[`passed_${i}`] ?? 0);
    return {
      name: expectation.name,
      dataset: target.dataset,
      passed_records: passed,
      failed_records: total - passed,
    };
  });
  const failing = expectations.findIndex(
    (e, i) => e.on_violation === "fail" && metrics[i]!.failed_records > 0,
  );
  const withoutFlags = `SELECT * EXCLUDE (${expectations.map((_, i) => flag(i)).join(", ")}) FROM ${CHECKED}`;
  if (failing >= 0) {
    const expectation = expectations[failing]!;
    const [sample] = await sandbox.rows(
      `SELECT to_json(r)::VARCHAR AS row FROM (${withoutFlags} WHERE NOT ${flag(failing)} LIMIT 1) AS r`,
    );
    throw new ExpectationViolationError(
      target.dataset,
      target.flow,
      expectation.name,
      expectation.condition,
      metrics[failing]!.failed_records,
      String(sample?.["row"]),
    );
  }

  // 4. The rows to write.
  const rows = Number(counted?.["kept"] ?? 0);
  return {
    rowsSql: dropping.length === 0 ? withoutFlags : `${withoutFlags} WHERE ${kept}`,
    quality: { dropped_records: total - rows, expectations: metrics },
    rows,
  };
}

/**
 * A materialized view's refreshed rows (a SELECT in the sandbox) through its expectations: the rows
 * to write (a SELECT over a parquet file of the sandbox) and their count.
 */
export async function applyViewExpectations(
  sandbox: Sandbox,
  target: ExpectationTarget,
  output: { readonly sql: string; readonly rows: number },
): Promise<{ readonly sql: string; readonly rows: number; readonly quality?: DataQuality }> {
  if (!target.expectations?.length) return output;
  // A condition that fails as it runs (a cast, say) is the user's SQL failing, as in a flow's batch.
  return sandbox.explainingFailures(`the expectations of materialized view "${target.dataset}"`, async () => {
    const checked = await applyExpectations(sandbox, target, output.sql);
    const path = await sandbox.newPath(".parquet");
    await sandbox.run(`COPY (${checked.rowsSql}) TO ${quoteLiteral(path)} (FORMAT parquet)`);
    const sql = `SELECT * FROM read_parquet(${quoteLiteral(path)})`;
    return { sql, rows: checked.rows ?? 0, ...(checked.quality ? { quality: checked.quality } : {}) };
  });
}

/** Step 1: the condition binds over the rows' columns and is a boolean. */
async function checkApplies(
  sandbox: Sandbox,
  target: ExpectationTarget,
  expectation: ExpectationDefinition,
  condition: string,
  rowsSql: string,
): Promise<void> {
  const what = `expectation "${expectation.name}" of dataset "${target.dataset}"`;
  let type: string;
  try {
    const [described] = await sandbox.rows(`DESCRIBE SELECT ${condition} AS c FROM (${rowsSql})`);
    type = String(described?.["column_type"]);
  } catch (error) {
    const column = unknownColumnOf(error);
    if (column === undefined) throw error;
    const columns = (await sandbox.rows(`DESCRIBE ${rowsSql}`)).map((row) => String(row["column_name"]));
    throw new ExpectationConditionError(
      `${what} names the column "${column}", which the rows of flow "${target.flow}" do not have (their columns: ${columns.join(", ")}); change its condition to name one of those, or the flow's SQL to give that column`,
      {
        cause: error,
        data: { dataset: target.dataset, flow: target.flow, expectation: expectation.name, column },
      },
    );
  }
  // An untyped NULL literal is a boolean that is never TRUE.
  if (type !== "BOOLEAN" && type !== '"NULL"') {
    throw new ExpectationConditionError(
      `${what} is a ${type}, not a boolean: write a condition that is true or false for each row (e.g. "amount > 0")`,
      { data: { dataset: target.dataset, flow: target.flow, expectation: expectation.name, type } },
    );
  }
}

/** The column a DuckDB binder error says is not there, if that is the error. */
function unknownColumnOf(error: unknown): string | undefined {
  for (let current = error; current instanceof Error; current = current.cause) {
    const match = /Referenced column "([^"]+)" not found/.exec(current.message);
    if (match) return match[1];
  }
  return undefined;
}
