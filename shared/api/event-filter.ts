import {
  EVENT_LEVELS,
  type EventLevel,
  type PipelineEvent,
  type TimeRange,
} from "../store/event-log-repository.ts";
import { EVENT_LOG_TYPES } from "./event-types.ts";
import { parseTimestamp } from "../pipeline/timestamp.ts";
import { InvalidParameterError } from "../errors/coded-error.ts";

/**
 * The event-log `filter` grammar (api.md "Event log"), Databricks' plus Ebb's fields:
 *
 *   filter   := clause ( AND clause )*
 *   clause   := field op literal | field IN ( literal [, literal]* )
 *   field    := level | id | timestamp | event_type | details.rewind_summary.dry_run
 *             | origin.update_id | origin.dataset_name
 *   literal  := 'text' ('' inside is a quote) | true | false
 *
 * `timestamp` takes `=`, `>`, `>=`, `<`, `<=` with an ISO-8601 literal; `level` and `event_type`
 * take `=` and `IN`; the rest `=` only. Keywords are case-insensitive. Anything else is refused with
 * `INVALID_PARAMETER_VALUE` naming the part not understood: a filter is never partly ignored.
 */

export interface EventFilter {
  readonly levels?: readonly EventLevel[];
  readonly id?: string;
  readonly range: TimeRange;
  readonly eventTypes?: readonly string[];
  readonly dryRun?: boolean;
  readonly updateId?: string;
  readonly datasetName?: string;
}

type Token =
  | { readonly kind: "word"; readonly text: string; readonly at: number }
  | { readonly kind: "string"; readonly text: string; readonly at: number }
  | { readonly kind: "op"; readonly text: string; readonly at: number }
  | { readonly kind: "punct"; readonly text: "(" | ")" | ","; readonly at: number };

const FIELDS = [
  "level",
  "id",
  "timestamp",
  "event_type",
  "details.rewind_summary.dry_run",
  "origin.update_id",
  "origin.dataset_name",
] as const;
type Field = (typeof FIELDS)[number];

export function parseEventFilter(input: string | undefined): EventFilter {
  const filter: Mutable<EventFilter> = { range: {} };
  if (input === undefined || input.trim() === "") return filter;
  const text: string = input;
  const tokens = tokenize(text);
  let position = 0;
  const peek = (): Token | undefined => tokens[position];
  const next = (expected: string): Token => {
    const token = tokens[position++];
    if (!token) refuse(text, text.length, `expected ${expected} but the filter ends`);
    return token;
  };

  for (;;) {
    const fieldToken = next("a field");
    const field = fieldToken.text.toLowerCase() as Field;
    if (fieldToken.kind !== "word" || !FIELDS.includes(field)) {
      refuse(
        text,
        fieldToken.at,
        `unknown field ${JSON.stringify(fieldToken.text)}; known: ${FIELDS.join(", ")}`,
      );
    }
    const opToken = next("an operator");
    if (opToken.kind === "word" && opToken.text.toLowerCase() === "in") {
      applyIn(filter, field, readList(), text, opToken.at);
    } else if (opToken.kind === "op") {
      applyComparison(filter, field, opToken.text, next("a value"), text, opToken.at);
    } else {
      refuse(text, opToken.at, `expected =, <, <=, >, >= or IN after ${field}`);
    }
    const joiner = peek();
    if (joiner === undefined) return filter;
    if (joiner.kind !== "word" || joiner.text.toLowerCase() !== "and") {
      refuse(text, joiner.at, "expected AND between conditions (OR and NOT are not supported)");
    }
    position++;
  }

  function readList(): Token[] {
    const open = next("(");
    if (open.text !== "(") refuse(text, open.at, "expected ( after IN");
    const values: Token[] = [];
    for (;;) {
      values.push(next("a value"));
      const separator = next(", or )");
      if (separator.text === ")") return values;
      if (separator.text !== ",") refuse(text, separator.at, "expected , or ) in the IN list");
    }
  }
}

function applyComparison(
  filter: Mutable<EventFilter>,
  field: Field,
  op: string,
  value: Token,
  text: string,
  at: number,
): void {
  if (field === "timestamp") {
    const time = isoTime(value, text);
    const range = { ...filter.range } as Mutable<TimeRange>;
    if (op === "=") Object.assign(range, { atOrAfter: time, atOrBefore: time });
    else if (op === ">") range.after = Math.max(range.after ?? -Infinity, time);
    else if (op === ">=") range.atOrAfter = Math.max(range.atOrAfter ?? -Infinity, time);
    else if (op === "<") range.before = Math.min(range.before ?? Infinity, time);
    else if (op === "<=") range.atOrBefore = Math.min(range.atOrBefore ?? Infinity, time);
    filter.range = range;
    return;
  }
  if (op !== "=")
    refuse(
      text,
      at,
      `${field} takes = ${field === "level" || field === "event_type" ? "or IN " : ""}only, not ${op}`,
    );
  if (field === "details.rewind_summary.dry_run") {
    const word = value.kind === "word" ? value.text.toLowerCase() : undefined;
    if (word !== "true" && word !== "false") refuse(text, value.at, `${field} compares with true or false`);
    once(filter, "dryRun", word === "true", field, text, at);
    return;
  }
  const literal = stringValue(value, text);
  if (field === "level") once(filter, "levels", [level(literal, value, text)], field, text, at);
  else if (field === "event_type")
    once(filter, "eventTypes", [eventType(literal, value, text)], field, text, at);
  else if (field === "id") once(filter, "id", literal, field, text, at);
  else if (field === "origin.update_id") once(filter, "updateId", literal, field, text, at);
  else once(filter, "datasetName", literal, field, text, at);
}

function applyIn(
  filter: Mutable<EventFilter>,
  field: Field,
  values: Token[],
  text: string,
  at: number,
): void {
  if (field === "level") {
    once(
      filter,
      "levels",
      values.map((v) => level(stringValue(v, text), v, text)),
      field,
      text,
      at,
    );
  } else if (field === "event_type") {
    once(
      filter,
      "eventTypes",
      values.map((v) => eventType(stringValue(v, text), v, text)),
      field,
      text,
      at,
    );
  } else {
    refuse(text, at, `${field} does not take IN (only level and event_type do)`);
  }
}

function once<Key extends keyof EventFilter>(
  filter: Mutable<EventFilter>,
  key: Key,
  value: EventFilter[Key],
  field: string,
  text: string,
  at: number,
): void {
  if (filter[key] !== undefined) refuse(text, at, `${field} appears twice; use IN for several values`);
  filter[key] = value;
}

function level(literal: string, token: Token, text: string): EventLevel {
  const upper = literal.toUpperCase() as EventLevel;
  if (!EVENT_LEVELS.includes(upper))
    refuse(text, token.at, `level ${JSON.stringify(literal)} is not one of ${EVENT_LEVELS.join(", ")}`);
  return upper;
}

/** A type Ebb never writes would match nothing, silently: a typo (`rewind_sumary`) is refused instead. */
function eventType(literal: string, token: Token, text: string): string {
  if (!(EVENT_LOG_TYPES as readonly string[]).includes(literal))
    refuse(
      text,
      token.at,
      `event_type ${JSON.stringify(literal)} is not one Ebb writes; known: ${EVENT_LOG_TYPES.join(", ")}`,
    );
  return literal;
}

function stringValue(token: Token, text: string): string {
  if (token.kind !== "string")
    refuse(text, token.at, `expected a quoted value ('…'), not ${JSON.stringify(token.text)}`);
  return token.text;
}

/** ISO-8601 (a time without a zone is UTC), or Databricks' UTC `yyyy-MM-dd HH:mm:ss`. */
function isoTime(token: Token, text: string): number {
  const literal = stringValue(token, text);
  const zoneless = ZONELESS_ISO.test(literal)
    ? `${literal.length === 10 ? `${literal}T00:00:00` : literal}Z`
    : literal;
  const time = parseTimestamp(zoneless);
  if (time === undefined) {
    refuse(
      text,
      token.at,
      `timestamp ${JSON.stringify(literal)} is not ISO-8601 (e.g. '2026-09-29T08:36:55Z')`,
    );
  }
  return time;
}

const ZONELESS_ISO = /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?)?$/;

function tokenize(text: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  while (i < text.length) {
    const char = text[i] as string;
    if (/\s/.test(char)) {
      i++;
    } else if (char === "'") {
      const start = i++;
      let value = "";
      for (;;) {
        if (i >= text.length) refuse(text, start, "a quoted value is not closed");
        if (text[i] === "'" && text[i + 1] === "'") {
          value += "'";
          i += 2;
        } else if (text[i] === "'") {
          i++;
          break;
        } else {
          value += text[i++];
        }
      }
      tokens.push({ kind: "string", text: value, at: start });
    } else if (/[<>=]/.test(char)) {
      const two = text.slice(i, i + 2);
      const op = two === ">=" || two === "<=" ? two : char;
      tokens.push({ kind: "op", text: op, at: i });
      i += op.length;
    } else if (char === "(" || char === ")" || char === ",") {
      tokens.push({ kind: "punct", text: char, at: i++ });
    } else if (/[A-Za-z_]/.test(char)) {
      const start = i;
      while (i < text.length && /[A-Za-z0-9_.]/.test(text[i] as string)) i++;
      tokens.push({ kind: "word", text: text.slice(start, i), at: start });
    } else {
      refuse(text, i, `unexpected character ${JSON.stringify(char)}`);
    }
  }
  return tokens;
}

function refuse(text: string, at: number, why: string): never {
  const part = text.slice(at, at + 40);
  throw new InvalidParameterError(`filter not understood at ${JSON.stringify(part || "(end)")}: ${why}`);
}

/** Whether an event passes every part of the filter (the parts the store did not apply itself). */
export function matchesEventFilter(event: PipelineEvent, filter: EventFilter): boolean {
  const time = Date.parse(event.timestamp);
  const { range } = filter;
  const dryRun = (event.details["rewind_summary"] as { dry_run?: unknown } | undefined)?.dry_run;
  return (
    (filter.levels === undefined || filter.levels.includes(event.level)) &&
    (filter.id === undefined || event.id === filter.id) &&
    (filter.eventTypes === undefined || filter.eventTypes.includes(event.event_type)) &&
    (filter.dryRun === undefined || dryRun === filter.dryRun) &&
    (filter.updateId === undefined || event.origin.update_id === filter.updateId) &&
    (filter.datasetName === undefined || event.origin.dataset_name === filter.datasetName) &&
    (range.after === undefined || time > range.after) &&
    (range.atOrAfter === undefined || time >= range.atOrAfter) &&
    (range.before === undefined || time < range.before) &&
    (range.atOrBefore === undefined || time <= range.atOrBefore)
  );
}

type Mutable<T> = { -readonly [K in keyof T]: T[K] };
