import { InvalidParameterError } from "../errors/coded-error.ts";

/**
 * The event-log `order_by` (api.md): `timestamp asc` or `timestamp desc` (left out: desc), also as a
 * one-element list (`["timestamp asc"]`, as the Databricks SDK sends it). Anything else is refused,
 * a bare `timestamp` too: the caller must say which way.
 */
export type EventOrder = "asc" | "desc";

export function parseEventOrder(value: string | readonly string[] | undefined): EventOrder {
  if (value === undefined) return "desc";
  const items = typeof value === "string" ? listItems(value) : value;
  if (items.length !== 1) {
    throw new InvalidParameterError(
      `order_by takes one ordering, "timestamp asc" or "timestamp desc", not ${items.length}`,
    );
  }
  if (/^\s*timestamp\s*$/i.test(items[0] as string)) {
    throw new InvalidParameterError(
      `order_by ${JSON.stringify(items[0])} has no direction: use "timestamp asc" or "timestamp desc"`,
    );
  }
  const match = /^\s*timestamp\s+(asc|desc)\s*$/i.exec(items[0] as string);
  if (!match) {
    throw new InvalidParameterError(
      `order_by ${JSON.stringify(items[0])} is not understood: use "timestamp asc" or "timestamp desc"`,
    );
  }
  return (match[1] as string).toLowerCase() as EventOrder;
}

/** A query-string value may be a JSON-style list (`["timestamp asc"]`) or the plain text. */
function listItems(value: string): string[] {
  const trimmed = value.trim();
  if (!trimmed.startsWith("[")) return [trimmed];
  try {
    const parsed: unknown = JSON.parse(trimmed.replace(/'/g, '"'));
    if (Array.isArray(parsed) && parsed.every((item) => typeof item === "string")) return parsed;
  } catch {
    // reported below
  }
  throw new InvalidParameterError(
    `order_by ${JSON.stringify(value)} is not a list of orderings: use ["timestamp asc"]`,
  );
}
