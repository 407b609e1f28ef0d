import { sparkStringLiteral } from "../../sql/spark-sql-tokens.ts";

/**
 * A flow's compiled SQL (a window's `partialSql` and `finalSql`, a join's `sql`, `innerSql` and
 * `matchSql`: the user's Spark SQL parsed and rewritten by DuckDB's parser, then printed by it) as
 * Spark SQL text, for the Spark job: DuckDB prints identifiers in double quotes, strings with doubled
 * quotes, `count(*)` as `count_star()` and interval literals as function calls (`INTERVAL 1 HOUR` as
 * `to_hours(CAST(trunc(CAST(1 AS DOUBLE)) AS BIGINT))`, `INTERVAL '1 hour'` as
 * `CAST('1 hour' AS INTERVAL)`); Spark reads backticks, backslash escapes, `count(*)` and interval
 * literals. A DISTINCT aggregate's partial, the set of its values (`list(DISTINCT x)`), is Spark's
 * `collect_list(DISTINCT x)` (which skips NULL; the merge drops it on both engines). Nothing else
 * changes: what the user wrote
 * in Spark's dialect prints back as Spark reads it, and what does not is refused by Spark's analysis
 * (FLOW_NOT_SUPPORTED_ON_SPARK, naming Spark's reason).
 */
export function sparkTextOfDeparsed(sql: string): string {
  let out = "";
  let i = 0;
  while (i < sql.length) {
    const c = sql[i]!;
    if (c === "'" || c === '"') {
      let value = "";
      let j = i + 1;
      for (; j < sql.length; j++) {
        if (sql[j] !== c) value += sql[j];
        else if (sql[j + 1] === c) value += sql[j++];
        else break;
      }
      out += c === "'" ? sparkStringLiteral(value) : `\`${value.replaceAll("`", "``")}\``;
      i = j + 1;
      continue;
    }
    const atWord = !/[\w$.]/.test(sql[i - 1] ?? "");
    const interval = INTERVAL_CALLS.map((pattern) => pattern.exec(sql.slice(i))).find((m) => m !== null);
    if (interval && atWord) {
      const [whole, unit, amount] = interval;
      out += unit
        ? `INTERVAL '${amount!.replaceAll("''", "'")}' ${INTERVAL_UNITS[unit.toLowerCase()]}`
        : `INTERVAL ${sparkStringLiteral(amount!.replaceAll("''", "'"))}`;
      i += whole.length;
      continue;
    }
    const star = /^count_star\(\)/i.exec(sql.slice(i));
    if (star && atWord) {
      out += "count(*)";
      i += star[0].length;
      continue;
    }
    const set = /^list\(\s*DISTINCT\b/i.exec(sql.slice(i));
    if (set && atWord) {
      out += "collect_list(DISTINCT";
      i += set[0].length;
      continue;
    }
    out += c;
    i++;
  }
  return out;
}

/** DuckDB's printing of interval literals: `to_<unit>(<whole number>)`, or a string cast to INTERVAL. */
const INTERVAL_CALLS = [
  /^to_(years|months|days|hours|minutes|seconds|milliseconds|microseconds)\(CAST\(trunc\(CAST\((\d+) AS DOUBLE\)\) AS (?:BIGINT|INTEGER)\)\)/i,
  /^to_(seconds)\(CAST\('(\d+(?:\.\d+)?)' AS DOUBLE\)\)/i,
  /^CAST\(()'((?:[^']|'')*)' AS INTERVAL\)/i,
];
const INTERVAL_UNITS: Readonly<Record<string, string>> = {
  years: "YEAR",
  months: "MONTH",
  days: "DAY",
  hours: "HOUR",
  minutes: "MINUTE",
  seconds: "SECOND",
  milliseconds: "MILLISECOND",
  microseconds: "MICROSECOND",
};
