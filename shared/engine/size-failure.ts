/**
 * Whether a batch failed for its size: what its function holds ran out (temporary space, memory,
 * time) rather than something a smaller batch would meet as well. Such a batch is planned again in
 * halves (batch-size.ts) instead of being retried as it was.
 */

/** Error codes of a batch that did not fit its function. */
const SIZE_CODES = new Set([
  /** The temporary folder filled (the engine's own check of its scratch space). */
  "TEMP_SPACE_EXHAUSTED",
  /** A statement spilled past, or needed more memory than, its limit, or ran past its time. */
  "SQL_TEMP_SPACE_LIMIT_EXCEEDED",
  "SQL_MEMORY_LIMIT_EXCEEDED",
  "SQL_TIME_LIMIT_EXCEEDED",
  /** The task function itself ran out (the state machine's Catch, task-errors.ts). */
  "FUNCTION_TIMEOUT",
  "FUNCTION_OUT_OF_MEMORY",
]);

/** Messages of a full disk or exhausted memory from below the engine (Node, DuckDB). */
const SIZE_MESSAGES = /No space left on device|ENOSPC|^Out of Memory Error|heap out of memory/i;

/** Why `error` (or an error it wraps) is a size failure, or undefined when it is not one. */
export function sizeFailureReason(error: unknown): string | undefined {
  for (let at = error, depth = 0; at instanceof Error && depth < 8; at = at.cause, depth++) {
    const { code, errorCode } = at as { code?: unknown; errorCode?: unknown };
    if (typeof errorCode === "string" && SIZE_CODES.has(errorCode))
      return `${errorCode}: ${firstSentence(at)}`;
    if (code === "ENOSPC" || SIZE_MESSAGES.test(at.message)) return firstLine(at);
  }
  return undefined;
}

function firstLine(error: Error): string {
  return error.message.split("\n")[0] ?? "";
}

/** What happened, without the way out a coded error's message goes on to give. */
function firstSentence(error: Error): string {
  return firstLine(error).split(/\.\s/)[0] ?? "";
}
