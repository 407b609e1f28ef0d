import type { Sandbox } from "../../engine/sandbox.ts";
import { quoteIdentifier } from "../../duck/sql-text.ts";

/**
 * How large a query's answer is, before it is read into memory: each row's size as JSON, measured in
 * the sandbox over the result table. An answer goes out in parts of at most `maxBytes` each (the query
 * endpoint's whole answer; one chunk of a statement's), so no request builds an answer larger than
 * a response may carry (Lambda's synchronous response is at most 6 MB).
 *
 *   EBB_ANSWER_MAX_BYTES  bytes one answer (or one chunk) may carry   default 4 MiB
 */

export const ANSWER_BYTES_VARIABLE = "EBB_ANSWER_MAX_BYTES";
const DEFAULT_ANSWER_BYTES = 4 * 1024 * 1024;
/** A statement's chunks together: beyond this, a statement is refused rather than kept in parts. */
export const MAX_CHUNKS = 64;

export function answerBytesFromEnv(env: NodeJS.ProcessEnv = process.env): number {
  const text = env[ANSWER_BYTES_VARIABLE];
  if (text === undefined) return DEFAULT_ANSWER_BYTES;
  const bytes = Number(text);
  if (!Number.isSafeInteger(bytes) || bytes < 1024)
    throw new TypeError(
      `${ANSWER_BYTES_VARIABLE} must be a number of bytes (at least 1024), not ${JSON.stringify(text)}`,
    );
  return bytes;
}

/** One part of an answer: rows `[first, first + count)` of the result table, in its order. */
export interface AnswerPart {
  readonly first: number;
  readonly count: number;
  readonly bytes: number;
}

export interface AnswerPlan {
  readonly parts: readonly AnswerPart[];
  readonly totalBytes: number;
  /** The largest row, in bytes: one larger than a part cannot be answered at all. */
  readonly largestRow: number;
  /** Rows were left out: past `maxRows`, or past `byteLimit`. */
  readonly truncated: boolean;
}

/**
 * Packs the result table's first `maxRows` rows into parts of at most `maxBytes` each, in order; with
 * `byteLimit`, only the rows whose running size stays within it. Reads one number per row, never the
 * rows themselves.
 */
export async function planAnswer(
  sandbox: Sandbox,
  table: string,
  maxBytes: number,
  byteLimit = Infinity,
  maxRows = Infinity,
): Promise<AnswerPlan> {
  const sizes = await sandbox.rows(
    `SELECT coalesce(strlen(CAST(to_json(r) AS VARCHAR)), 4) AS bytes FROM ${quoteIdentifier(table)} AS r ORDER BY rowid`,
  );
  const parts: AnswerPart[] = [];
  let totalBytes = 0;
  let largestRow = 0;
  let kept = 0;
  for (const row of sizes) {
    const bytes = Number(row["bytes"]);
    if (kept >= maxRows || totalBytes + bytes > byteLimit) break;
    totalBytes += bytes;
    largestRow = Math.max(largestRow, bytes);
    const last = parts.at(-1);
    if (last && last.bytes + bytes <= maxBytes)
      parts[parts.length - 1] = { ...last, count: last.count + 1, bytes: last.bytes + bytes };
    else parts.push({ first: kept, count: 1, bytes });
    kept++;
  }
  return { parts, totalBytes, largestRow, truncated: kept < sizes.length };
}

/** The rows of one part, read as answers are (exact decimals, maps). */
export function readPart(sandbox: Sandbox, table: string, part: AnswerPart) {
  return sandbox.answerRows(
    `SELECT * FROM ${quoteIdentifier(table)} WHERE rowid >= ${part.first} AND rowid < ${part.first + part.count} ORDER BY rowid`,
  );
}
