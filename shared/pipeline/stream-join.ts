import { MICRO_BATCH_NAME } from "./dataset-references.ts";
/**
 * A stream-stream join, read from DuckDB's serialized parse tree (pure). The outermost SELECT must
 * join `source` with the flow's joined stream (INNER or LEFT, `source` on the left), and the ON
 * condition must bound the two event times against each other:
 *
 *   source.t BETWEEN s.t - INTERVAL 10 MINUTES AND s.t + INTERVAL 1 HOUR
 *
 * (or `>=`/`<=` pairs, with either side first). The range `lo <= source.t - s.t <= hi` is what lets
 * the join drop state: once the watermark is past `t - lo`, no row of the joined stream can still
 * match a `source` row at `t`, and past `t + hi` no `source` row can match a joined row at `t`. A
 * left outer row is written when its `source` row is let go unmatched.
 */

/** The name of the micro-batch in a flow's SQL. */

export interface TimeRange {
  /** Bounds of `source time - joined time`, in microseconds. */
  readonly loMicros: number;
  readonly hiMicros: number;
}

export interface StreamJoin {
  readonly kind: "join";
  readonly type: "inner" | "left";
  /** How the query names each side (its alias, else the table name). */
  readonly leftAlias: string;
  readonly rightAlias: string;
  readonly range: TimeRange;
}

export type StreamJoinAnalysis =
  | StreamJoin
  | {
      readonly kind: "refused";
      /** `time-bound`: the condition has no (or a one-sided) event-time range. */
      readonly reason: "time-bound" | "shape";
      readonly message: string;
    };

export interface JoinSides {
  /** The joined stream's dataset name, as the SQL names it. */
  readonly stream: string;
  /** The watermark (event time) columns of `source` and of the joined stream. */
  readonly leftTime: string;
  readonly rightTime: string;
}

type Node = Record<string, unknown>;

const isNode = (value: unknown): value is Node =>
  value !== null && typeof value === "object" && !Array.isArray(value);

const UNIT_MICROS: Readonly<Record<string, number>> = {
  to_microseconds: 1,
  to_milliseconds: 1_000,
  to_seconds: 1_000_000,
  to_minutes: 60_000_000,
  to_hours: 3_600_000_000,
  to_days: 86_400_000_000,
  to_weeks: 604_800_000_000,
};

const TEXT_UNIT_MICROS: Readonly<Record<string, number>> = {
  microsecond: 1,
  millisecond: 1_000,
  second: 1_000_000,
  minute: 60_000_000,
  hour: 3_600_000_000,
  day: 86_400_000_000,
  week: 604_800_000_000,
};

const TIME_BOUND_ADVICE = (sides: JoinSides) =>
  `bound the event times against each other in the ON condition, e.g. source.${sides.leftTime} BETWEEN ${sides.stream}.${sides.rightTime} - INTERVAL 10 MINUTES AND ${sides.stream}.${sides.rightTime} + INTERVAL 1 HOUR, so the join's state can be let go`;

/** The join of `statement` (a serialized SELECT), or undefined when it reads no joined stream. */
export function streamJoinOf(statement: unknown, sides: JoinSides): StreamJoinAnalysis {
  const node = isNode(statement) && isNode(statement["node"]) ? statement["node"] : undefined;
  const shape = (message: string): StreamJoinAnalysis => ({ kind: "refused", reason: "shape", message });
  if (node?.["type"] !== "SELECT_NODE")
    return shape(
      `joins ${sides.stream} as a stream: its SQL must be one SELECT … FROM source JOIN ${sides.stream} ON …`,
    );
  const from = node["from_table"];
  if (!isNode(from) || from["type"] !== "JOIN")
    return shape(
      `joins ${sides.stream} as a stream, so its outermost SELECT must read FROM source [LEFT] JOIN ${sides.stream} ON … (a join in a subquery or CTE is not kept)`,
    );
  const left = baseTable(from["left"]);
  const right = baseTable(from["right"]);
  if (left?.table !== MICRO_BATCH_NAME || right?.table !== sides.stream)
    return shape(
      `joins ${sides.stream} as a stream, so its outermost SELECT must read FROM source [LEFT] JOIN ${sides.stream} ON … with source on the left, and join nothing else there`,
    );
  const joinType = String(from["join_type"]);
  const refType = String(from["ref_type"]);
  if (refType !== "REGULAR" || (joinType !== "INNER" && joinType !== "LEFT"))
    return shape(
      `joins ${sides.stream} with a ${refType === "REGULAR" ? joinType : refType} join: a stream-stream join is INNER or LEFT (outer) with an ON condition; put the stream to keep every row of on the left`,
    );
  if (node["group_expressions"] !== undefined && (node["group_expressions"] as unknown[]).length > 0)
    return shape(
      "aggregates a stream-stream join: write the joined rows to a streaming table and aggregate in a flow or materialized view over it",
    );
  const range = timeRange(from["condition"], left.alias, right.alias, sides);
  if (range === undefined || !Number.isFinite(range.loMicros) || !Number.isFinite(range.hiMicros))
    return {
      kind: "refused",
      reason: "time-bound",
      message: `joins ${sides.stream} without ${range === undefined ? "an event-time range" : "an upper and a lower event-time bound"}: ${TIME_BOUND_ADVICE(sides)}`,
    };
  if (range.loMicros > range.hiMicros)
    return {
      kind: "refused",
      reason: "time-bound",
      message: `joins ${sides.stream} with an event-time range that no pair of rows can meet: ${TIME_BOUND_ADVICE(sides)}`,
    };
  return {
    kind: "join",
    type: joinType === "LEFT" ? "left" : "inner",
    leftAlias: left.alias,
    rightAlias: right.alias,
    range,
  };
}

function baseTable(value: unknown): { table: string; alias: string } | undefined {
  if (!isNode(value) || value["type"] !== "BASE_TABLE") return undefined;
  if (value["schema_name"] || value["catalog_name"]) return undefined;
  const table = String(value["table_name"]).toLowerCase();
  const alias = typeof value["alias"] === "string" && value["alias"] !== "" ? value["alias"] : table;
  return { table, alias: alias.toLowerCase() };
}

/** The conjuncts of an AND tree. */
function conjuncts(condition: unknown): Node[] {
  if (!isNode(condition)) return [];
  if (condition["class"] === "CONJUNCTION" && condition["type"] === "CONJUNCTION_AND")
    return (condition["children"] as unknown[]).flatMap(conjuncts);
  return [condition];
}

type Side = "left" | "right";
/** An event time plus a constant offset: `side.time + offset`. */
interface TimeTerm {
  readonly side: Side;
  readonly offset: number;
}

function timeRange(
  condition: unknown,
  leftAlias: string,
  rightAlias: string,
  sides: JoinSides,
): TimeRange | undefined {
  let lo = -Infinity;
  let hi = Infinity;
  let found = false;
  const bound = (a: unknown, op: string, b: unknown) => {
    const x = timeTerm(a, leftAlias, rightAlias, sides);
    const y = timeTerm(b, leftAlias, rightAlias, sides);
    if (!x || !y || x.side === y.side) return;
    // x.t + x.o  op  y.t + y.o, as a bound on d = left.t - right.t.
    const [l, r, flipped] = x.side === "left" ? [x, y, false] : [y, x, true];
    const c = r.offset - l.offset;
    const direction = flipped ? flip(op) : op;
    found = true;
    if (direction === "<=" || direction === "<" || direction === "=") hi = Math.min(hi, c);
    if (direction === ">=" || direction === ">" || direction === "=") lo = Math.max(lo, c);
  };
  for (const term of conjuncts(condition)) {
    if (term["class"] === "BETWEEN") {
      bound(term["input"], ">=", term["lower"]);
      bound(term["input"], "<=", term["upper"]);
    } else if (term["class"] === "COMPARISON") {
      const op = COMPARISONS[String(term["type"])];
      if (op) bound(term["left"], op, term["right"]);
    }
  }
  return found ? { loMicros: lo, hiMicros: hi } : undefined;
}

const COMPARISONS: Readonly<Record<string, string>> = {
  COMPARE_EQUAL: "=",
  COMPARE_LESSTHAN: "<",
  COMPARE_LESSTHANOREQUALTO: "<=",
  COMPARE_GREATERTHAN: ">",
  COMPARE_GREATERTHANOREQUALTO: ">=",
};

function flip(op: string): string {
  return op === "<" ? ">" : op === ">" ? "<" : op === "<=" ? ">=" : op === ">=" ? "<=" : op;
}

function timeTerm(
  value: unknown,
  leftAlias: string,
  rightAlias: string,
  sides: JoinSides,
): TimeTerm | undefined {
  if (!isNode(value)) return undefined;
  if (value["class"] === "COLUMN_REF") {
    const names = (value["column_names"] as string[]).map((n) => n.toLowerCase());
    const column = names.at(-1)!;
    const qualifier = names.length > 1 ? names.at(-2) : undefined;
    const left = column === sides.leftTime.toLowerCase() && (qualifier ?? leftAlias) === leftAlias;
    const right = column === sides.rightTime.toLowerCase() && (qualifier ?? rightAlias) === rightAlias;
    // An unqualified name that is both sides' time column is ambiguous: DuckDB refuses it anyway.
    if (left && !right) return { side: "left", offset: 0 };
    if (right && !left) return { side: "right", offset: 0 };
    return undefined;
  }
  if (value["class"] === "CAST" && value["child"] !== undefined) {
    const type = (value["cast_type"] as { id?: string } | undefined)?.id;
    if (type === "TIMESTAMP" || type === "TIMESTAMP WITH TIME ZONE")
      return timeTerm(value["child"], leftAlias, rightAlias, sides);
    return undefined;
  }
  if (value["class"] === "FUNCTION" && (value["function_name"] === "+" || value["function_name"] === "-")) {
    const [a, b] = value["children"] as unknown[];
    if (b === undefined) return undefined;
    const sign = value["function_name"] === "+" ? 1 : -1;
    const x = timeTerm(a, leftAlias, rightAlias, sides);
    const bi = intervalMicros(b);
    if (x && bi !== undefined) return { side: x.side, offset: x.offset + sign * bi };
    const ai = intervalMicros(a);
    const y = timeTerm(b, leftAlias, rightAlias, sides);
    if (sign === 1 && y && ai !== undefined) return { side: y.side, offset: y.offset + ai };
  }
  return undefined;
}

/** A constant interval in microseconds: `INTERVAL 1 HOUR`, `INTERVAL '10 minutes'`. */
export function intervalMicros(value: unknown): number | undefined {
  if (!isNode(value)) return undefined;
  if (value["class"] === "FUNCTION" && typeof value["function_name"] === "string") {
    const unit = UNIT_MICROS[value["function_name"]];
    const [child] = value["children"] as unknown[];
    if (unit !== undefined) {
      const n = numberOf(child);
      return n === undefined ? undefined : n * unit;
    }
    return undefined;
  }
  if (value["class"] === "CAST") {
    const type = (value["cast_type"] as { id?: string } | undefined)?.id;
    if (type !== "INTERVAL") return undefined;
    const child = value["child"];
    if (!isNode(child) || child["class"] !== "CONSTANT") return undefined;
    const constant = child["value"] as { value?: unknown } | undefined;
    return typeof constant?.value === "string" ? textInterval(constant.value) : undefined;
  }
  return undefined;
}

function numberOf(value: unknown): number | undefined {
  if (!isNode(value)) return undefined;
  if (value["class"] === "CONSTANT") {
    const constant = value["value"] as { value?: unknown; is_null?: boolean } | undefined;
    const n = Number(constant?.value);
    return constant?.is_null || !Number.isFinite(n) ? undefined : n;
  }
  if (value["class"] === "CAST") return numberOf(value["child"]);
  if (value["class"] === "FUNCTION" && value["function_name"] === "trunc") {
    const n = numberOf((value["children"] as unknown[])[0]);
    return n === undefined ? undefined : Math.trunc(n);
  }
  return undefined;
}

/** `10 minutes`, `1 hour` (one number and one unit, as DuckDB would read it). */
function textInterval(text: string): number | undefined {
  const match = /^\s*(\d+)\s*([a-z]+?)s?\s*$/i.exec(text);
  if (!match) return undefined;
  const unit = TEXT_UNIT_MICROS[(match[2] as string).toLowerCase()];
  return unit === undefined ? undefined : Number(match[1]) * unit;
}
