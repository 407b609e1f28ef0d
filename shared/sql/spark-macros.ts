import { parseDataType, generateDataType, Dialect } from "@polyglot-sql/sdk";
import { strftimeFormat } from "./datetime-patterns.ts";
import { SqlNotSupportedError } from "./errors.ts";

/**
 * Ebb's own translations of the Spark functions the transpiler (polyglot-sql) leaves as they are or
 * reads otherwise than Spark: each takes its arguments as DuckDB SQL and gives DuckDB SQL with
 * Spark's answer. The pre-pass renames a call `f(…)` to `__ebb_f(…)` so the transpiler carries it
 * through untouched, with its arguments translated; the post-pass expands it here.
 */

/** A call the macro cannot give Spark's answer for (e.g. a bit length other than 256). */
export class MacroRefusal extends Error {
  constructor(
    readonly functionName: string,
    readonly reason: string,
  ) {
    super(reason);
  }
}

export interface MacroArgument {
  readonly sql: string;
  /** The argument's value when it is a string literal. */
  readonly literal?: string;
  /** The argument's value when it is a number literal. */
  readonly number?: number;
}

/** Translations only the post-pass applies: a statement calling one by its name is refused. */
export const POST_PASS_ONLY: ReadonlySet<string> = new Set([
  "divisor",
  "substring_start",
  "integral_cast",
  "epoch_seconds_cast",
  "timestamp_of_seconds",
  "timestamp_of_text",
  "array_subscript",
]);

/** DuckDB SQL Ebb can see is a map (its own translations of map(…) and map_from_arrays(…)). */
function isMap(text: string): boolean {
  return /^\(*\s*(MAP|MAP_FROM_ARRAYS|MAP_FROM_ENTRIES)\s*\(/i.test(text);
}

/** DuckDB SQL Ebb can see is a list (a list literal or a function that makes one). */
function isList(text: string): boolean {
  return /^\(*\s*(\[|LIST_\w*\(|LIST_VALUE\(|ARRAY_AGG\(|ARRAY_SORT\(|ARRAY_DISTINCT\(|STRING_SPLIT\w*\(|STR_SPLIT\w*\()/i.test(
    text,
  );
}

type Macro = (args: readonly MacroArgument[], name: string) => string;

function arity(name: string, args: readonly MacroArgument[], min: number, max = min): void {
  if (args.length < min || args.length > max) {
    const count = min === max ? `${min}` : `${min} to ${max}`;
    throw new MacroRefusal(name, `${name} takes ${count} arguments, not ${args.length}`);
  }
}

const sql = (args: readonly MacroArgument[], index: number) => args[index]!.sql;

/** A datetime pattern argument (a literal) as a DuckDB format. */
function pattern(args: readonly MacroArgument[], index: number, name: string): string {
  const value = args[index]!.literal;
  if (value === undefined) throw new MacroRefusal(name, `${name}'s pattern must be a string literal`);
  try {
    return `'${strftimeFormat(value).replaceAll("'", "''")}'`;
  } catch (error) {
    if (error instanceof SqlNotSupportedError) throw new MacroRefusal(name, error.message.split(". ")[0]!);
    throw error;
  }
}

const asTimestamp = (text: string) => `CAST(${text} AS TIMESTAMP)`;
const asDate = (text: string) => `CAST(${text} AS DATE)`;
const epochSeconds = (text: string) => `CAST(floor(epoch(${text})) AS BIGINT)`;
const one =
  (body: (a: string) => string): Macro =>
  (args, name) => {
    arity(name, args, 1);
    return body(sql(args, 0));
  };
const two =
  (body: (a: string, b: string) => string): Macro =>
  (args, name) => {
    arity(name, args, 2);
    return body(sql(args, 0), sql(args, 1));
  };

export const MACROS: Readonly<Record<string, Macro>> = {
  // Spark gives JSON text for objects and arrays, the scalar's text otherwise, and NULL for text that
  // is not JSON: json_extract_string's on the text read as JSON where it is.
  get_json_object: (args, name) => {
    arity(name, args, 2);
    const path = args[1]!.literal;
    // Spark's `$['a b']` (and `col:a['a b']`, which the transpiler writes `["a b"]`) is DuckDB's `$."a b"`.
    const duckPath =
      path === undefined
        ? sql(args, 1)
        : `'${path.replace(/\[\s*(?:'([^']*)'|"([^"]*)")\s*\]/g, (_, single?: string, double?: string) => `.${JSON.stringify(single ?? double)}`).replaceAll("'", "''")}'`;
    return `json_extract_string(TRY_CAST(${sql(args, 0)} AS JSON), ${duckPath})`;
  },
  // Datetime patterns (yyyy-MM-dd) become DuckDB's (%Y-%m-%d): datetime-patterns.ts.
  to_timestamp: (args, name) => {
    arity(name, args, 1, 2);
    if (args.length === 1) return asTimestamp(sql(args, 0));
    return `strptime(${sql(args, 0)}, ${pattern(args, 1, name)})`;
  },
  to_date: (args, name) => {
    arity(name, args, 1, 2);
    if (args.length === 1) return asDate(sql(args, 0));
    return asDate(`strptime(${sql(args, 0)}, ${pattern(args, 1, name)})`);
  },
  date_format: (args, name) => {
    arity(name, args, 2);
    return `strftime(${asTimestamp(sql(args, 0))}, ${pattern(args, 1, name)})`;
  },
  unix_timestamp: (args, name) => {
    arity(name, args, 1, 2);
    if (args.length === 1) return epochSeconds(asTimestamp(sql(args, 0)));
    return epochSeconds(`strptime(${sql(args, 0)}, ${pattern(args, 1, name)})`);
  },
  from_unixtime: (args, name) => {
    arity(name, args, 1, 2);
    const format = args.length === 2 ? pattern(args, 1, name) : "'%Y-%m-%d %H:%M:%S'";
    return `strftime(make_timestamp(CAST(trunc(${sql(args, 0)}) AS BIGINT) * 1000000), ${format})`;
  },
  date_add: two((d, n) => `CAST(${asDate(d)} + CAST(${n} AS INTEGER) AS DATE)`),
  date_sub: two((d, n) => `CAST(${asDate(d)} - CAST(${n} AS INTEGER) AS DATE)`),
  add_months: two((d, n) => `CAST(${asDate(d)} + to_months(CAST(${n} AS INTEGER)) AS DATE)`),
  date_from_unix_date: one((n) => `CAST(DATE '1970-01-01' + CAST(${n} AS INTEGER) AS DATE)`),
  last_day: one((d) => `last_day(${asDate(d)})`),
  // Spark counts Sunday as 1; DuckDB's dayofweek Sunday as 0.
  dayofweek: one((d) => `(isodow(${asDate(d)}) % 7 + 1)`),
  timestamp_seconds: one((n) => `make_timestamp(CAST(CAST(${n} AS DOUBLE) * 1000000 AS BIGINT))`),
  // Spark: the square root of a negative number is NaN, not an error.
  sqrt: one((x) => `CASE WHEN ${x} < 0 THEN CAST('NaN' AS DOUBLE) ELSE sqrt(${x}) END`),
  slice: (args, name) => {
    arity(name, args, 3);
    const [a, s, n] = [sql(args, 0), sql(args, 1), sql(args, 2)];
    const start = `(CASE WHEN ${s} > 0 THEN ${s} ELSE len(${a}) + ${s} + 1 END)`;
    return `list_slice(${a}, ${start}, ${start} + ${n} - 1)`;
  },
  timestamp_millis: one((n) => `make_timestamp(CAST(${n} AS BIGINT) * 1000)`),
  unix_seconds: one((t) => epochSeconds(t)),
  unix_millis: one((t) => `epoch_ms(${t})`),
  // Spark's concat is NULL when an argument is; DuckDB's skips NULLs (`||` does not).
  concat: (args) => `(${args.map((arg) => `(${arg.sql})`).join(" || ")})`,
  // Not a Spark function: the post-pass wraps every divisor in it (`/`, `%`), for ANSI's error.
  divisor: one(
    (b) =>
      `CASE WHEN ${b} = 0 THEN error('[DIVIDE_BY_ZERO] Division by zero: use try_divide to get NULL instead') ELSE ${b} END`,
  ),
  isnull: one((a) => `(${a} IS NULL)`),
  isnotnull: one((a) => `(${a} IS NOT NULL)`),
  nanvl: two((a, b) => `CASE WHEN isnan(${a}) THEN ${b} ELSE ${a} END`),
  some: one((a) => `bool_or(${a})`),
  any: one((a) => `bool_or(${a})`),
  lpad: (args, name) => {
    arity(name, args, 2, 3);
    return `lpad(${sql(args, 0)}, ${sql(args, 1)}, ${args[2]?.sql ?? "' '"})`;
  },
  rpad: (args, name) => {
    arity(name, args, 2, 3);
    return `rpad(${sql(args, 0)}, ${sql(args, 1)}, ${args[2]?.sql ?? "' '"})`;
  },
  split: (args, name) => {
    arity(name, args, 2);
    return `string_split_regex(${sql(args, 0)}, ${sql(args, 1)})`;
  },
  // Spark replaces every match, and writes groups $1; DuckDB replaces the first unless 'g', and \\1.
  regexp_replace: (args, name) => {
    arity(name, args, 3);
    const replacement = args[2]!.literal;
    if (replacement === undefined)
      throw new MacroRefusal(name, "regexp_replace's replacement must be a string literal");
    const duck = replacement.replaceAll("\\", "\\\\").replace(/\$(\d)/g, "\\$1");
    return `regexp_replace(${sql(args, 0)}, ${sql(args, 1)}, '${duck.replaceAll("'", "''")}', 'g')`;
  },
  array_join: (args, name) => {
    arity(name, args, 2, 3);
    const items =
      args.length === 3
        ? `list_transform(${sql(args, 0)}, x -> coalesce(x, ${sql(args, 2)}))`
        : `list_filter(${sql(args, 0)}, x -> x IS NOT NULL)`;
    return `array_to_string(${items}, ${sql(args, 1)})`;
  },
  // Spark: NULL when the element is absent but the array holds a NULL.
  array_contains: two(
    (a, x) =>
      `CASE WHEN list_contains(${a}, ${x}) THEN true WHEN list_contains(list_transform(${a}, e -> e IS NULL), true) THEN NULL ELSE false END`,
  ),
  map: (args, name) => {
    if (args.length % 2 !== 0) throw new MacroRefusal(name, "map takes pairs of a key and a value");
    const keys = args.filter((_, i) => i % 2 === 0).map((arg) => arg.sql);
    const values = args.filter((_, i) => i % 2 === 1).map((arg) => arg.sql);
    return `MAP([${keys.join(", ")}], [${values.join(", ")}])`;
  },
  array_position: two((a, x) => `coalesce(list_position(${a}, ${x}), 0)`),
  arrays_overlap: two((a, b) => `list_has_any(${a}, ${b})`),
  map_contains_key: two((m, k) => `map_contains(${m}, ${k})`),
  // Spark puts NULLs first ascending and last descending.
  sort_array: (args, name) => {
    arity(name, args, 1, 2);
    const ascending = args.length === 1 || /^true$/i.test(sql(args, 1));
    if (args.length === 2 && !/^(true|false)$/i.test(sql(args, 1)))
      throw new MacroRefusal(name, "sort_array's order must be TRUE or FALSE");
    return ascending
      ? `list_sort(${sql(args, 0)}, 'ASC', 'NULLS FIRST')`
      : `list_sort(${sql(args, 0)}, 'DESC', 'NULLS LAST')`;
  },
  array_sort: (args, name) => {
    arity(name, args, 1);
    return `list_sort(${sql(args, 0)}, 'ASC', 'NULLS LAST')`;
  },
  named_struct: (args, name) => {
    if (args.length % 2 !== 0 || args.some((arg, i) => i % 2 === 0 && arg.literal === undefined)) {
      throw new MacroRefusal(name, "named_struct takes pairs of a literal name and a value");
    }
    const fields = [];
    for (let i = 0; i < args.length; i += 2)
      fields.push(`"${args[i]!.literal!.replaceAll('"', '""')}" := ${sql(args, i + 1)}`);
    return `struct_pack(${fields.join(", ")})`;
  },
  transform: (args, name) => {
    arity(name, args, 2);
    if (/^\(\s*\w+\s*,/.test(sql(args, 1)))
      throw new MacroRefusal(name, "transform with an index argument ((x, i) -> …) is not translated");
    return `list_transform(${sql(args, 0)}, ${sql(args, 1)})`;
  },
  json_tuple: (_args, name) => {
    throw new MacroRefusal(name, "json_tuple is a generator: use get_json_object per field");
  },
  from_json: (args, name) => {
    arity(name, args, 2);
    const schema = args[1]!.literal;
    if (schema === undefined) throw new MacroRefusal(name, "from_json's schema must be a DDL string literal");
    const type = duckDbStructType(schema, name);
    // Spark's PERMISSIVE mode: text that is not JSON of the schema gives a row of NULLs, not an error.
    const text = sql(args, 0);
    const fieldList = !/^\s*(array|struct|map)\s*</i.test(schema);
    if (!fieldList) return `TRY_CAST(TRY_CAST(${text} AS JSON) AS ${type})`;
    const nulls = JSON.stringify(Object.fromEntries(topLevelFields(schema).map((field) => [field, null])));
    return `CASE WHEN ${text} IS NULL THEN NULL ELSE coalesce(TRY_CAST(TRY_CAST(${text} AS JSON) AS ${type}), CAST(JSON '${nulls.replaceAll("'", "''")}' AS ${type})) END`;
  },
  substring_index: (args, name) => {
    arity(name, args, 3);
    const [text, delimiter, count] = [sql(args, 0), sql(args, 1), sql(args, 2)];
    const parts = `string_split(${text}, ${delimiter})`;
    return (
      `CASE WHEN ${count} = 0 OR ${delimiter} = '' THEN '' ` +
      `WHEN ${count} > 0 THEN array_to_string(${parts}[1:${count}], ${delimiter}) ` +
      `ELSE array_to_string(${parts}[${count}:], ${delimiter}) END`
    );
  },
  sha2: (args, name) => {
    arity(name, args, 2);
    const bits = args[1]!.number;
    if (bits !== 256 && bits !== 0) {
      throw new MacroRefusal(
        name,
        "sha2 runs with 256 bits here (sha2(x, 256)); DuckDB has no SHA-224/384/512",
      );
    }
    return `sha256(${sql(args, 0)})`;
  },
  // Spark 4 (ANSI): size(NULL) is NULL. DuckDB counts a map's entries with cardinality, which binds for
  // maps only: a map Ebb can see (map(…), map_from_arrays(…)) is counted so, anything else as a list.
  size: (args, name) => {
    arity(name, args, 1);
    return isMap(sql(args, 0)) ? `cardinality(${sql(args, 0)})` : `len(${sql(args, 0)})`;
  },
  cardinality: (args, name) => {
    arity(name, args, 1);
    return isMap(sql(args, 0)) ? `cardinality(${sql(args, 0)})` : `len(${sql(args, 0)})`;
  },
  // 1-based; a negative index counts from the end; ANSI: 0 or past the end is an error for an array,
  // and a missing key NULL for a map. Each branch binds whatever the operand's type.
  element_at: (args, name) => {
    arity(name, args, 2);
    const [a, i] = [sql(args, 0), sql(args, 1)];
    const index = `TRY_CAST(${i} AS BIGINT)`;
    return (
      `CASE WHEN typeof(${a}) LIKE 'MAP(%' THEN (${a})[${i}] ` +
      `WHEN ${index} = 0 THEN error('[INVALID_INDEX_OF_ZERO] The index 0 is invalid: an index shall be either < 0 or > 0 (the first element has index 1)') ` +
      `WHEN abs(${index}) > json_array_length(to_json(${a})) THEN error('[INVALID_ARRAY_INDEX_IN_ELEMENT_AT] The index ' || ${i} || ' is out of bounds: use try_element_at to get NULL instead') ` +
      `ELSE (${a})[${i}] END`
    );
  },
  // Not a Spark function: the post-pass's `a[i]` (0-based in Spark; ANSI: out of bounds is an error).
  array_subscript: (args) => {
    const [a, i] = [sql(args, 0), sql(args, 1)];
    const index = `TRY_CAST(${i} AS BIGINT)`;
    return (
      `CASE WHEN typeof(${a}) LIKE 'MAP(%' THEN (${a})[(${i}) + 1] ` +
      `WHEN ${index} < 0 OR ${index} >= json_array_length(to_json(${a})) THEN error('[INVALID_ARRAY_INDEX] The index ' || ${i} || ' is out of bounds: use try_element_at to get NULL instead') ` +
      `ELSE (${a})[(${i}) + 1] END`
    );
  },
  // A string reversed, or an array Ebb can see is one (DuckDB's reverse reads strings only).
  reverse: (args, name) => {
    arity(name, args, 1);
    const x = sql(args, 0);
    return isList(x) ? `list_reverse(${x})` : `reverse(${x})`;
  },
  // Spark joins an array argument's elements too, and skips NULLs.
  concat_ws: (args, name) => {
    if (args.length < 1) throw new MacroRefusal(name, "concat_ws takes a separator and values");
    const separator = sql(args, 0);
    const parts = args
      .slice(1)
      .map((arg) =>
        isList(arg.sql)
          ? `nullif(array_to_string(list_filter(${arg.sql}, e -> e IS NOT NULL), ${separator}), '')`
          : arg.sql,
      );
    return `concat_ws(${[separator, ...parts].join(", ")})`;
  },
  // Spark's `initcap` upper-cases each word's first letter and lower-cases the rest.
  initcap: (args, name) => {
    arity(name, args, 1);
    return `array_to_string(list_transform(string_split(lower(${sql(args, 0)}), ' '), w -> upper(w[1]) || w[2:]), ' ')`;
  },
  // Not Spark functions: the post-pass's casts (duckdb-tree-rewrite.ts sparkCast), the type as a literal.
  // Each branch binds whatever the operand's type (through VARCHAR), and only the one for it runs.
  integral_cast: (args) => {
    const [x, type] = [sql(args, 0), args[1]!.literal!];
    const text = `CAST(${x} AS VARCHAR)`;
    return (
      `CASE WHEN typeof(${x}) IN ('DOUBLE', 'FLOAT') THEN CAST(trunc(CAST(${text} AS DOUBLE)) AS ${type}) ` +
      `WHEN typeof(${x}) LIKE 'DECIMAL%' THEN CAST(trunc(CAST(${text} AS DECIMAL(38, 18))) AS ${type}) ` +
      `WHEN typeof(${x}) = 'VARCHAR' AND NOT regexp_full_match(${text}, '\\s*[+-]?\\d+\\s*') ` +
      `THEN error('[CAST_INVALID_INPUT] The value ' || ${text} || ' of the type "STRING" cannot be cast to "${type}" because it is malformed') ` +
      `ELSE CAST(${x} AS ${type}) END`
    );
  },
  epoch_seconds_cast: (args) => `CAST(floor(epoch(${sql(args, 0)})) AS ${args[1]!.literal!})`,
  timestamp_of_seconds: one((x) => `make_timestamp(CAST(trunc(CAST(${x} AS DOUBLE) * 1000000) AS BIGINT))`),
  timestamp_of_text: one((x) => `CAST(CAST(${x} AS TIMESTAMPTZ) AS TIMESTAMP)`),
  // Java's remainder made positive, as Spark's pmod.
  pmod: two((a, n) => `(((${a}) % (${n})) + (${n})) % (${n})`),
  // Half to even.
  bround: (args, name) => {
    arity(name, args, 1, 2);
    return `round_even(${sql(args, 0)}, ${args[1]?.sql ?? "0"})`;
  },
  signum: one((x) => `CAST(sign(${x}) AS DOUBLE)`),
  octet_length: one((s) => `strlen(${s})`),
  btrim: (args, name) => {
    arity(name, args, 1, 2);
    return args.length === 1 ? `trim(${sql(args, 0)})` : `trim(${sql(args, 0)}, ${sql(args, 1)})`;
  },
  hex: one((x) => `upper(hex(${x}))`),
  // trunc(date, 'MM'): the date at the start of its year, quarter, month or week.
  trunc: (args, name) => {
    arity(name, args, 2);
    const unit = args[1]!.literal?.toUpperCase();
    const part =
      unit === undefined
        ? undefined
        : {
            YEAR: "year",
            YYYY: "year",
            YY: "year",
            QUARTER: "quarter",
            MONTH: "month",
            MM: "month",
            MON: "month",
            WEEK: "week",
          }[unit];
    if (part === undefined)
      throw new MacroRefusal(
        name,
        "trunc's unit must be a literal: YEAR, YYYY, YY, QUARTER, MONTH, MM, MON or WEEK",
      );
    return `CAST(date_trunc('${part}', ${asDate(sql(args, 0))}) AS DATE)`;
  },
  // Distinct elements in the order they first appear (DuckDB's list_distinct keeps no order).
  array_distinct: one((a) => `list_filter(${a}, (x, i) -> list_position(${a}, x) = i)`),
  array_except: two(
    (a, b) => `list_filter(${a}, (x, i) -> NOT list_contains(${b}, x) AND list_position(${a}, x) = i)`,
  ),
  array_union: two(
    (a, b) => `list_filter(list_concat(${a}, ${b}), (x, i) -> list_position(list_concat(${a}, ${b}), x) = i)`,
  ),
  array_repeat: two((x, n) => `list_transform(range(CAST(${n} AS BIGINT)), i -> ${x})`),
  flatten: one((a) => `flatten(${a})`),
  // From start to stop inclusive; the step defaults to 1 or -1 (a day for dates).
  sequence: (args, name) => {
    arity(name, args, 2, 3);
    const [start, stop] = [sql(args, 0), sql(args, 1)];
    if (/ AS DATE\)+$/i.test(start)) {
      const step = args[2]?.sql ?? "INTERVAL 1 DAY";
      return `list_transform(generate_series(CAST(${start} AS TIMESTAMP), CAST(${stop} AS TIMESTAMP), ${step}), d -> CAST(d AS DATE))`;
    }
    const step = args[2]?.sql ?? `CASE WHEN ${start} <= ${stop} THEN 1 ELSE -1 END`;
    return `generate_series(${start}, ${stop}, ${step})`;
  },
  exists: two((a, f) => `list_bool_or(list_transform(${a}, ${f}))`),
  forall: two((a, f) => `list_bool_and(list_transform(${a}, ${f}))`),
  aggregate: (args, name) => {
    arity(name, args, 3);
    return `list_reduce(${sql(args, 0)}, ${sql(args, 2)}, ${sql(args, 1)})`;
  },
  reduce: (args, name) => {
    arity(name, args, 3);
    return `list_reduce(${sql(args, 0)}, ${sql(args, 2)}, ${sql(args, 1)})`;
  },
  percentile_approx: (args, name) => {
    arity(name, args, 2, 3);
    return `quantile_disc(${sql(args, 0)}, ${sql(args, 1)})`;
  },
  // Spark's substring reads a start of 0 as 1.
  substring_start: (args) => `CASE WHEN ${sql(args, 0)} = 0 THEN 1 ELSE ${sql(args, 0)} END`,
  nvl2: (args, name) => {
    arity(name, args, 3);
    return `CASE WHEN ${sql(args, 0)} IS NOT NULL THEN ${sql(args, 1)} ELSE ${sql(args, 2)} END`;
  },
};

/** The field names of a DDL schema's top level (`a INT, b STRUCT<c: INT>` → a, b). */
function topLevelFields(ddl: string): string[] {
  const fields: string[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i <= ddl.length; i++) {
    const char = ddl[i];
    if (char === "<" || char === "(") depth++;
    else if (char === ">" || char === ")") depth--;
    else if ((char === "," && depth === 0) || char === undefined) {
      const name = /^\s*`?([^`\s:]+)`?/.exec(ddl.slice(start, i))?.[1];
      if (name) fields.push(name);
      start = i + 1;
    }
  }
  return fields;
}

/** A Spark DDL schema (`a INT, b ARRAY<STRING>`) as a DuckDB STRUCT type. */
function duckDbStructType(ddl: string, name: string): string {
  // A whole type (`array<struct<…>>`, `struct<…>`, `map<…>`) or, as Spark reads it too, a field list.
  const whole = /^\s*(array|struct|map)\s*</i.test(ddl);
  const parsed = parseDataType(whole ? ddl : `STRUCT<${ddl}>`, Dialect.Spark);
  if (!parsed.success || !parsed.dataType) {
    throw new MacroRefusal(name, `from_json's schema ${JSON.stringify(ddl)} is not a DDL schema Ebb reads`);
  }
  const generated = generateDataType(parsed.dataType, Dialect.DuckDB);
  if (!generated.success || !generated.sql) {
    throw new MacroRefusal(name, `from_json's schema ${JSON.stringify(ddl)} has no DuckDB type`);
  }
  return generated.sql;
}
