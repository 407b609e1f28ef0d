import { randomUUID } from "node:crypto";
import type { ExecuteStatementBody } from "../../api/request-schemas.ts";
import { Sandbox } from "../../engine/sandbox.ts";
import { QueryError } from "../../engine/errors.ts";
import { CodedError, httpStatusOf } from "../../errors/coded-error.ts";
import {
  parameterLiteral,
  statementChunk,
  statementFailure,
  statementManifest,
  translateStatement,
  type StatementResult,
  type TranslatedStatement,
} from "../../sql/index.ts";
import type { ControlPlane } from "../plane/control-plane.ts";
import { ResultTooLargeError } from "../../api/errors.ts";
import { describeBytes } from "../../pipeline/byte-size.ts";
import { answerBytesFromEnv, MAX_CHUNKS, planAnswer, readPart } from "../tables/answer-size.ts";
import { keepStatementAnswer, keepStatementChunk } from "./statement-answers.ts";
import { loadStatementSource } from "./statement-sources.ts";
import type { StatementResponse } from "./statement-response.ts";

/**
 * `POST /api/2.0/sql/statements` (api.md "SQL statements"; Databricks' Statement Execution API), so
 * `w.statement_execution.execute_statement(…)` and the seed's queries run against Ebb:
 *
 * 1. Translate the Databricks SQL (shared/sql, pure), with `current_timestamp()` the plane's now.
 * 2. Open a sandbox (the query endpoint's: same lock-down, same limits) and load the sources the
 *    statement names into it.
 * 3. Run the translated query, at most `row_limit` rows (+1 to tell truncation), into a table.
 * 4. Size its rows (answer-size.ts) and cut them into chunks of at most `EBB_ANSWER_MAX_BYTES`
 *    (and `byte_limit`, Databricks' own cap); keep every chunk but the first, which is answered
 *    inline. Answer `SUCCEEDED` with the manifest and the first chunk; a failure of the statement is, as on
 *    Databricks, a 200 `FAILED` whose `status.error` carries the class (`[SQL_NOT_SUPPORTED] …`).
 *    Failures of the request itself (its fields) are refused before, as on every route.
 * 5. Keep the answer for the follow-up calls (statement-answers.ts) before giving it.
 */

const DEFAULT_ROW_LIMIT = 10_000;

export async function executeStatement(
  plane: ControlPlane,
  body: ExecuteStatementBody,
): Promise<StatementResponse> {
  const response = await answer(plane, body, randomUUID());
  await keepStatementAnswer(plane, response);
  return response;
}

async function answer(
  plane: ControlPlane,
  body: ExecuteStatementBody,
  statementId: string,
): Promise<StatementResponse> {
  const notices = ignoredFields(body);
  const withNotices = notices.length > 0 ? { notices } : {};
  let translated: TranslatedStatement | undefined;
  try {
    translated = translateStatement(body.statement, {
      now: plane.clock(),
      catalog: body.catalog,
      schema: body.schema,
      parameters: new Map((body.parameters ?? []).map((p) => [p.name, parameterLiteral(p.value, p.type)])),
    });
    const result = await run(plane, translated, statementId, {
      rowLimit: body.row_limit ?? DEFAULT_ROW_LIMIT,
      byteLimit: body.byte_limit ?? Infinity,
    });
    return { statement_id: statementId, status: { state: "SUCCEEDED" }, ...result, ...withNotices };
  } catch (error) {
    const failure =
      error instanceof QueryError ? statementFailure(error.message, translated?.sources ?? []) : error;
    if (!(failure instanceof CodedError) || failure.errorCode === "INTERNAL_ERROR") throw error;
    return {
      statement_id: statementId,
      status: {
        state: "FAILED",
        error: {
          error_code: serviceErrorCode(failure),
          message: `[${failure.errorCode}] ${failure.message}`,
        },
      },
      ...withNotices,
    };
  }
}

async function run(
  plane: ControlPlane,
  statement: TranslatedStatement,
  statementId: string,
  limits: { rowLimit: number; byteLimit: number },
): Promise<StatementResult> {
  const sandbox = await Sandbox.open();
  try {
    // An event log is read only in part when the statement keeps only some types: that needs its tree.
    const readsEvents = statement.sources.some((source) => source.kind === "event_log");
    const tree = readsEvents ? await sandbox.parsedQuery(statement.sql, "the statement") : undefined;
    for (const source of statement.sources) await loadStatementSource(plane, sandbox, source, tree);
    await sandbox.runUserQuery(statement.sql, "__ebb_result", "the statement", {
      maxRows: limits.rowLimit + 1,
    });
    const columns = (await sandbox.rows("DESCRIBE __ebb_result")).map((row) => ({
      name: String(row["column_name"]),
      duckType: String(row["column_type"]),
    }));
    const maxBytes = answerBytesFromEnv();
    const plan = await planAnswer(sandbox, "__ebb_result", maxBytes, limits.byteLimit, limits.rowLimit);
    if (plan.largestRow > maxBytes || plan.parts.length > MAX_CHUNKS)
      throw new ResultTooLargeError(
        plan.largestRow > maxBytes
          ? `a row of the statement's result is ${describeBytes(plan.largestRow)}, over the ${describeBytes(maxBytes)} one chunk may carry: select fewer or shorter columns (substring, or the length instead of the value)`
          : `the statement's result is ${describeBytes(plan.totalBytes)}, over the ${describeBytes(maxBytes * MAX_CHUNKS)} Ebb answers in ${MAX_CHUNKS} chunks: add a LIMIT or a narrower WHERE, select fewer columns, or set row_limit or byte_limit`,
        { data: { bytes: plan.totalBytes, limit: maxBytes } },
      );
    const manifest = statementManifest(
      columns,
      plan.parts.map((part) => part.count),
      plan.truncated,
    );
    let first: StatementResult["result"] | undefined;
    // One chunk in memory at a time: each is kept as it is made.
    for (const [index, part] of plan.parts.entries()) {
      const chunk = statementChunk(
        manifest,
        statementId,
        index,
        await readPart(sandbox, "__ebb_result", part),
      );
      if (index === 0) first = chunk;
      else await keepStatementChunk(plane, statementId, chunk);
    }
    return { manifest, result: first ?? statementChunk(manifest, statementId, 0, []) };
  } finally {
    await sandbox.close();
  }
}

/** Databricks' `ServiceErrorCode` of a failed statement (the SDKs parse only those). */
function serviceErrorCode(error: CodedError): string {
  if (error.errorCode === "CANCELED") return "CANCELLED";
  if (error.errorCode === "SQL_TIME_LIMIT_EXCEEDED") return "DEADLINE_EXCEEDED";
  if (/LIMIT_EXCEEDED$/.test(error.errorCode)) return "RESOURCE_EXHAUSTED";
  const status = httpStatusOf(error);
  if (status === 404) return "NOT_FOUND";
  if (status === 409) return "ABORTED";
  return "BAD_REQUEST";
}

function ignoredFields(body: ExecuteStatementBody): string[] {
  const notices: string[] = [];
  if (body.warehouse_id !== undefined)
    notices.push("warehouse_id is ignored: Ebb runs every statement in a sandbox of its own");
  if (body.wait_timeout !== undefined || body.on_wait_timeout !== undefined)
    notices.push("wait_timeout and on_wait_timeout are ignored: Ebb answers when the statement is done");
  if (body.query_tags !== undefined) notices.push("query_tags are ignored: Ebb keeps no query history");
  return notices;
}
