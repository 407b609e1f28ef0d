import { sparkStringLiteral } from "../../sql/spark-sql-tokens.ts";

/**
 * A windowed flow's compiled SQL (the plan's `partialSql` and `finalSql`: the user's Spark SQL parsed
 * and rewritten by DuckDB's parser, then printed by it) as Spark SQL text, for the Spark job: DuckDB
 * prints identifiers in double quotes, strings with doubled quotes and `count(*)` as `count_star()`;
 * Spark reads backticks, backslash escapes and `count(*)`. A DISTINCT aggregate's partial, the set of
 * its values (`list(DISTINCT x)`), is Spark's `collect_list(DISTINCT x)` (which skips NULL; the
 * merge drops it on both engines). Nothing else changes: what the user wrote
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
