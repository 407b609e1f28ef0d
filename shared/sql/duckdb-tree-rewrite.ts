import { Dialect, generate, parse } from "@polyglot-sql/sdk";
import { SqlUnsupportedError } from "./errors.ts";
import { MACROS, MacroRefusal, type MacroArgument } from "./spark-macros.ts";

/**
 * Pass 3 of the Spark → DuckDB translation (spark-to-duckdb.ts): a rewrite of DuckDB's syntax tree,
 * children first, so the statement answers as Spark does: casts are ANSI again, TIMESTAMP stays
 * TIMESTAMP, division by zero and DATE arithmetic follow Spark, and the pre-pass's `__ebb_` marks
 * expand into Ebb's own translations (spark-macros.ts).
 */

/** What the pre-pass names its marks with, and this pass reads them by. */
export const PREFIX = "__ebb_";

/** The transpiler reads `ORDER BY ALL` as a column named ALL; marked, it is DuckDB's `ORDER BY ALL` again. */
export const ORDER_BY_ALL = `${PREFIX}order_by_all`;

/** Pass 3: DuckDB text from the transpiler → the final DuckDB text. */
export function rewriteDuckDbSql(duckDbSql: string): string {
  const parsed = parse(duckDbSql, Dialect.DuckDB);
  if (!parsed.success || !parsed.ast) {
    throw new SqlUnsupportedError(
      `Ebb cannot translate this statement (the transpiler's DuckDB SQL does not parse: ${parsed.error})`,
      {
        line: 1,
        column: 1,
      },
    );
  }
  const ast = rewrite(parsed.ast) as unknown[];
  const generated = generate(ast, Dialect.DuckDB);
  if (!generated.success || !generated.sql)
    throw new Error(`Ebb's transpiled SQL does not generate: ${generated.error}`);
  return generated.sql[0]!;
}

type Node = Record<string, unknown>;

/** The tree with its children rewritten first, then the node itself. */
function rewrite(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(rewrite);
  if (value === null || typeof value !== "object") return value;
  // try_cast keeps DuckDB's TRY_CAST: its operand is rewritten, its cast is not Spark's ANSI one.
  const call = (value as Node)["function"] as { name?: string; args?: Node[] } | undefined;
  if (call?.name?.toLowerCase() === `${PREFIX}try`) {
    const inner = (call.args?.[0]?.["cast"] ?? call.args?.[0]?.["try_cast"]) as Node | undefined;
    if (!inner) throw new Error("Ebb's try_cast mark lost its cast");
    return { try_cast: withoutZone({ ...inner, this: rewrite(inner["this"]) }) };
  }
  const node: Node = {};
  for (const [key, child] of Object.entries(value)) node[key] = rewrite(child);
  return rewriteNode(node);
}

/**
 * DuckDB's reserved words that Spark lets name a column unquoted (`at`, `time`, `position`, …): quoted
 * in DuckDB's SQL (`SELECT keyword_name FROM duckdb_keywords() WHERE keyword_category <> 'unreserved'`).
 */
const DUCKDB_RESERVED = new Set(
  `all analyse analyze and anti any array as asc asof asymmetric at authorization between bigint binary bit
  boolean both by case cast char character check coalesce collate collation column columns concurrently
  constraint create cross dec decimal default deferrable desc describe distinct do else end except exists
  extract false fetch float for foreign freeze from full generated glob group grouping grouping_id having
  ilike in initially inner inout int integer intersect interval into is isnull join lambda lateral leading
  left like limit map national natural nchar none not notnull null nullif numeric offset on only or order
  out outer overlaps overlay pivot pivot_longer pivot_wider placing position positional precision primary
  qualify real references returning right row select semi setof show similar smallint some struct
  substring summarize symmetric table tablesample then time timestamp to trailing treat trim true try_cast
  union unique unpack unpivot using values varchar variadic verbose when where window with`.split(/\s+/),
);

function rewriteNode(node: Node): Node {
  // An identifier (a function call has `args`): a DuckDB reserved word is quoted.
  if (typeof node["name"] === "string" && node["quoted"] === false && !("args" in node)) {
    if (DUCKDB_RESERVED.has(node["name"].toLowerCase())) return { ...node, quoted: true };
    return node;
  }
  const column = node["column"] as { name?: { name?: string } } | undefined;
  if (column?.name?.name === ORDER_BY_ALL) return { var: { this: "ALL" } };
  // Every cast the transpiler wrote TRY_CAST was Spark's CAST or `::`, which fail on bad input (ANSI).
  if ("try_cast" in node) return sparkCast(withoutZone(node["try_cast"] as Node));
  if ("cast" in node) return sparkCast(withoutZone(node["cast"] as Node));
  // ANSI: dividing by zero is an error in Spark; DuckDB gives Infinity or NULL.
  for (const operator of ["div", "mod"] as const) {
    const operation = node[operator] as { right?: Node } | undefined;
    if (operation?.right === undefined) continue;
    const literal = (operation.right["literal"] as { value?: string } | undefined)?.value;
    if (literal !== undefined && Number(literal) !== 0) return node;
    return { [operator]: { ...operation, right: expand("divisor", [operation.right]) } };
  }
  // Spark's LIKE escapes with a backslash unless told otherwise; DuckDB's has no escape by default.
  for (const operator of ["like", "ilike"] as const) {
    const like = node[operator] as { escape?: unknown } | undefined;
    if (like !== undefined && (like.escape === null || like.escape === undefined)) {
      return { [operator]: { ...like, escape: { literal: { literal_type: "string", value: "\\" } } } };
    }
  }
  // Spark: a DATE plus whole days, months or years is a DATE (DuckDB's is a TIMESTAMP).
  const sum = node["add"] as { left?: Node; right?: Node } | undefined;
  if (sum && isDate(sum.left) && calendarInterval(sum.right)) {
    return {
      cast: {
        this: { paren: { this: node, trailing_comments: [] } },
        to: { data_type: "date" },
        double_colon_syntax: false,
      },
    };
  }
  // Spark: a DATE minus a DATE is an INTERVAL DAY (DuckDB's is a number of days): refused, with the way out.
  const difference = node["sub"] as { left?: Node; right?: Node } | undefined;
  if (difference && isDate(difference.left) && isDate(difference.right)) {
    throw new MacroRefusal(
      "-",
      "a DATE minus a DATE is an INTERVAL in Spark, which Ebb does not return: use datediff(end, start) for the days",
    );
  }
  // `array(…)` the transpiler left as written (around Ebb's own calls) is DuckDB's list_value.
  const array = node["function"] as { name?: string } | undefined;
  if (array?.name?.toUpperCase() === "ARRAY") return { function: { ...array, name: "LIST_VALUE" } };
  // Spark's `a[i]` counts from 0 and fails past the end (ANSI): the pre-pass's `a[(i) + 1]` mark.
  const subscript = node["subscript"] as { this?: Node; index?: Node } | undefined;
  const added = subscript?.index?.["add"] as { left?: Node; right?: Node } | undefined;
  const marked = added?.left?.["paren"] as { this?: Node } | undefined;
  if (
    subscript?.this !== undefined &&
    marked?.this !== undefined &&
    (added!.right?.["literal"] as { value?: string } | undefined)?.value === "1"
  ) {
    return expand("array_subscript", [subscript.this, marked.this]);
  }
  // Spark reads a substring starting at 0 as starting at 1 (DuckDB takes one character fewer).
  const substring = node["substring"] as { start?: Node } | undefined;
  if (substring?.start !== undefined && !("case" in substring.start)) {
    const start = substring.start;
    const fromOne = expand("substring_start", [start]);
    return { substring: { ...substring, start: fromOne } };
  }
  const call = node["function"] as { name?: string; args?: unknown[] } | undefined;
  if (call?.name === undefined) return node;
  const name = call.name.toLowerCase();
  if (name === "get_json_object") return expand("get_json_object", call.args ?? []);
  if (!name.startsWith(PREFIX)) return node;
  const macro = name.slice(PREFIX.length);
  return expand(macro, call.args ?? []);
}

const INTEGRAL = new Set(["tiny_int", "small_int", "int", "integer", "big_int"]);

/**
 * Spark's (ANSI) cast where DuckDB's reads otherwise: to a whole number a fraction is truncated (DuckDB
 * rounds), text with a fraction is an error, a timestamp is its epoch seconds; to a timestamp a number
 * is epoch seconds and text with an offset is that instant.
 */
function sparkCast(cast: Node): Node {
  const to = cast["to"] as Node | undefined;
  const type = String(to?.["data_type"] ?? "").toLowerCase();
  const operand = cast["this"] as Node;
  const literal = operand["literal"] as { literal_type?: string; value?: string } | undefined;
  const typeText = (argument({ cast }).sql.match(/ AS ((?:(?! AS ).)+)\)$/) ?? [])[1];
  if (INTEGRAL.has(type) && typeText !== undefined) {
    if (literal?.literal_type === "number" && /^-?\d+$/.test(literal.value ?? "")) return { cast };
    const castTo = (cast["this"] as Node)["cast"] as Node | undefined;
    const fromTimestamp = String((castTo?.["to"] as Node | undefined)?.["data_type"] ?? "") === "timestamp";
    const macro = fromTimestamp ? "epoch_seconds_cast" : "integral_cast";
    return expand(macro, [operand, { literal: { literal_type: "string", value: typeText } }]);
  }
  if (type === "timestamp") {
    if (literal?.literal_type === "number") return expand("timestamp_of_seconds", [operand]);
    // Text with an offset is that instant (DuckDB's TIMESTAMP drops the offset); the session is UTC.
    if (literal?.literal_type === "string" && /(Z|[+-]\d\d(:?\d\d)?)$/.test(literal.value ?? ""))
      return expand("timestamp_of_text", [operand]);
  }
  return { cast };
}

/** A node Ebb can see is a DATE (a cast to DATE: Spark's DATE'…' literals, CAST(… AS DATE)). */
function isDate(node: Node | undefined): boolean {
  const cast = node?.["cast"] as Node | undefined;
  return (cast?.["to"] as Node | undefined)?.["data_type"] === "date";
}

/** An INTERVAL of whole days, weeks, months or years (Spark adds those to a DATE as a DATE). */
function calendarInterval(node: Node | undefined): boolean {
  const interval = node?.["interval"] as { unit?: { unit?: string } } | undefined;
  return /^(day|week|month|year)s?$/i.test(interval?.unit?.unit ?? "");
}

/** Spark's TIMESTAMP is an instant; in the UTC session DuckDB's TIMESTAMP reads and prints it as Spark does. */
function withoutZone(cast: Node): Node {
  const to = cast["to"] as Node | undefined;
  if (to?.["data_type"] === "timestamp" && to["timezone"] === true)
    return { ...cast, to: { ...to, timezone: false } };
  return cast;
}

function expand(name: string, args: unknown[]): Node {
  const macro = MACROS[name];
  if (!macro) throw new Error(`Ebb has no translation named ${name}`);
  const text = macro(args.map(argument), name);
  const parsed = parse(`SELECT ${text}`, Dialect.DuckDB);
  if (!parsed.success || !parsed.ast)
    throw new Error(`Ebb's translation of ${name} does not parse: ${parsed.error}`);
  const select = (parsed.ast[0] as { select: { expressions: Node[] } }).select;
  return { paren: { this: select.expressions[0], trailing_comments: [] } };
}

function argument(node: unknown): MacroArgument {
  const literal = (node as { literal?: { literal_type: string; value: string } }).literal;
  const generated = generate([{ select: { ...SELECT_TEMPLATE, expressions: [node] } }], Dialect.DuckDB);
  if (!generated.success || !generated.sql)
    throw new Error(`Ebb cannot print an argument: ${generated.error}`);
  const sql = generated.sql[0]!.replace(/^SELECT /, "");
  return {
    sql,
    ...(literal?.literal_type === "string" ? { literal: literal.value } : {}),
    ...(literal?.literal_type === "number" ? { number: Number(literal.value) } : {}),
  };
}

/** A bare `SELECT …` node, to print one expression. */
const SELECT_TEMPLATE = (() => {
  const parsed = parse("SELECT 1", Dialect.DuckDB);
  return (parsed.ast![0] as { select: Node }).select;
})();
