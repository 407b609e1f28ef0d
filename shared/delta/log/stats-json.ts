import type { FileStats } from "./actions.ts";
import {
  JsonNumber,
  parseExact,
  stringifyExact,
  toPlainJson,
  type ExactJson,
  type ExactJsonInput,
} from "./exact-json.ts";
import { z } from "zod";

/**
 * The `add.stats` string (PROTOCOL.md "Per-file Statistics") as written and as read for data
 * skipping. Its bounds never pass through a double: a `long` past 2^53 or a decimal of more than 15
 * digits would round to the wrong side of the value it bounds.
 */

/** The `add.stats` text of `stats`, its numbers digit for digit. */
export function encodeFileStats(stats: FileStats): string {
  return stringifyExact(stats as unknown as ExactJsonInput);
}

/** The part of `add.stats` that counts a file's rows. */
const RecordCountStats = z.object({ numRecords: z.number().int().nonnegative() });

/**
 * A file's rows by its `add.stats` (`numRecords`): undefined when it has no stats, they do not count
 * its rows, or the text is not JSON (stats are optional, and some writers omit `numRecords`).
 */
export function statsRecordCount(text: string | null | undefined): number | undefined {
  if (!text) return undefined;
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return undefined;
  }
  const parsed = RecordCountStats.safeParse(json);
  return parsed.success ? parsed.data.numRecords : undefined;
}

/** Stats as read back for data skipping: bounds keep their exact JSON (numbers as `JsonNumber`). */
export interface ExactFileStats {
  readonly numRecords?: number;
  readonly minValues: Readonly<Record<string, ExactJson>>;
  readonly maxValues: Readonly<Record<string, ExactJson>>;
  readonly nullCount: Readonly<Record<string, unknown>>;
}

/** Parses an `add.stats` string without rounding its bounds; undefined when absent or malformed. */
export function parseFileStats(text: string | null | undefined): ExactFileStats | undefined {
  if (!text) return undefined;
  let parsed: ExactJson;
  try {
    parsed = parseExact(text);
  } catch {
    return undefined;
  }
  if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed)) return undefined;
  const record = parsed as Readonly<Record<string, ExactJson>>;
  const bounds = (value: ExactJson | undefined) =>
    value !== null && typeof value === "object" && !Array.isArray(value) && !(value instanceof JsonNumber)
      ? (value as Readonly<Record<string, ExactJson>>)
      : {};
  const numRecords = record.numRecords instanceof JsonNumber ? record.numRecords.toNumber() : undefined;
  return {
    ...(numRecords === undefined ? {} : { numRecords }),
    minValues: bounds(record.minValues),
    maxValues: bounds(record.maxValues),
    nullCount: toPlainJson(bounds(record.nullCount)) as Record<string, unknown>,
  };
}
