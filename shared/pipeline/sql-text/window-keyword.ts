/**
 * Spark's `window(...)` and `window.start` do not parse in DuckDB, where WINDOW is a keyword: quote
 * the word where it is a function call, a struct reference or a bare select item, but not the WINDOW
 * clause (`WINDOW w AS (…)`). String literals, quoted names and comments are left as they are.
 */
export function quoteWindowKeyword(sql: string): string {
  let out = "";
  let i = 0;
  while (i < sql.length) {
    const c = sql[i]!;
    const skip = (end: string, from: number) => {
      const at = sql.indexOf(end, from);
      const stop = at === -1 ? sql.length : at + end.length;
      out += sql.slice(i, stop);
      i = stop;
    };
    if (c === "'" || c === '"') skip(c, i + 1);
    else if (sql.startsWith("--", i)) skip("\n", i + 2);
    else if (sql.startsWith("/*", i)) skip("*/", i + 2);
    else if (/[A-Za-z_]/.test(c)) {
      const word = /^[A-Za-z_][A-Za-z0-9_$]*/.exec(sql.slice(i))![0];
      const after = sql.slice(i + word.length);
      const isClause = /^\s+[A-Za-z_][A-Za-z0-9_]*\s+as\b/i.test(after);
      out += word.toLowerCase() === "window" && !isClause ? '"window"' : word;
      i += word.length;
    } else {
      out += c;
      i += 1;
    }
  }
  return out;
}
