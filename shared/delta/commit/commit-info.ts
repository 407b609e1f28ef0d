import packageJson from "../../../package.json" with { type: "json" };
import type { CommitInfo } from "../log/actions.ts";

/** `engineInfo` of every commit Ebb writes (PROTOCOL.md "Commit Provenance Information"). */
export const ENGINE_INFO = `Ebb/${packageJson.version}`;

/** What an operation says about itself in `commitInfo`, as Delta's `DESCRIBE HISTORY` shows it. */
export interface OperationDescription {
  /** Delta's operation name: `WRITE`, `DELETE`, `UPDATE`, `MERGE`, `RESTORE`, `CREATE TABLE`, ... */
  readonly operation: string;
  readonly operationParameters: Readonly<Record<string, unknown>>;
  readonly operationMetrics?: Readonly<Record<string, number>>;
  /** True when the commit only adds files without reading the table (PROTOCOL.md: a blind append). */
  readonly isBlindAppend: boolean;
}

/**
 * The commit timestamp: `max(now, previous + 1 ms, floor)`. This is the In-Commit Timestamps rule
 * (PROTOCOL.md "Writer Requirements for In-Commit Timestamps", item 3) applied to
 * `commitInfo.timestamp`, so timestamps are strictly increasing within the table; `floor` lets a
 * flow keep timestamps causal across tables (the newest upstream commit it consumed + 1 ms).
 */
export function nextCommitTimestamp(now: number, previous: number | undefined, floor?: number): number {
  let timestamp = now;
  if (previous !== undefined) timestamp = Math.max(timestamp, previous + 1);
  if (floor !== undefined) timestamp = Math.max(timestamp, floor);
  return timestamp;
}

/**
 * The `commitInfo` action, as Delta writes it: an `operationParameters` value is a JSON scalar as
 * is (Spark's RESTORE writes `"version": 4`, a number) and a list or object JSON-encoded into a
 * string; an `operationMetrics` value is its decimal string. That is what Delta's own readers and
 * `DESCRIBE HISTORY` expect.
 */
export function buildCommitInfo(
  description: OperationDescription,
  at: {
    readonly timestamp: number;
    readonly readVersion: number | undefined;
    /** Record `timestamp` as the commit's `inCommitTimestamp` (PROTOCOL.md "In-Commit Timestamps"). */
    readonly inCommitTimestamp?: boolean;
  },
): CommitInfo {
  return {
    ...(at.inCommitTimestamp ? { inCommitTimestamp: at.timestamp } : {}),
    timestamp: at.timestamp,
    operation: description.operation,
    operationParameters: encodeParameters(description.operationParameters),
    ...(description.operationMetrics
      ? { operationMetrics: encodeMetrics(description.operationMetrics) }
      : {}),
    ...(at.readVersion !== undefined ? { readVersion: at.readVersion } : {}),
    isolationLevel: "WriteSerializable",
    isBlindAppend: description.isBlindAppend,
    engineInfo: ENGINE_INFO,
  };
}

function encodeParameters(
  parameters: Readonly<Record<string, unknown>>,
): Record<string, string | number | boolean | null> {
  const out: Record<string, string | number | boolean | null> = {};
  for (const [key, value] of Object.entries(parameters)) {
    if (value === undefined) continue;
    const scalar = value === null || ["string", "number", "boolean"].includes(typeof value);
    out[key] = scalar ? (value as string | number | boolean | null) : JSON.stringify(value);
  }
  return out;
}

function encodeMetrics(metrics: Readonly<Record<string, number>>): Record<string, string> {
  return Object.fromEntries(Object.entries(metrics).map(([key, value]) => [key, String(value)]));
}
