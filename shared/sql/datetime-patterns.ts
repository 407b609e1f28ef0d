import { SqlNotSupportedError } from "./errors.ts";

/**
 * Spark's datetime patterns (`yyyy-MM-dd HH:mm:ss`) as DuckDB `strftime`/`strptime` formats
 * (`%Y-%m-%d %H:%M:%S`). Letters run in groups (`yyyy`, `MM`); text in single quotes is literal.
 */

const FIELDS: Readonly<Record<string, string>> = {
  yyyy: "%Y",
  yy: "%y",
  y: "%Y",
  MMMM: "%B",
  MMM: "%b",
  MM: "%m",
  M: "%-m",
  dd: "%d",
  d: "%-d",
  DDD: "%j",
  D: "%-j",
  HH: "%H",
  H: "%-H",
  hh: "%I",
  h: "%-I",
  mm: "%M",
  m: "%-M",
  ss: "%S",
  s: "%-S",
  SSS: "%g",
  SSSSSS: "%f",
  a: "%p",
  EEEE: "%A",
  EEE: "%a",
  E: "%a",
  XXX: "%z",
  Z: "%z",
};

export function strftimeFormat(pattern: string): string {
  let out = "";
  let at = 0;
  while (at < pattern.length) {
    const char = pattern[at]!;
    if (char === "'") {
      const close = pattern.indexOf("'", at + 1);
      if (close === at + 1) out += "'";
      else out += pattern.slice(at + 1, close === -1 ? pattern.length : close).replaceAll("%", "%%");
      at = close === -1 ? pattern.length : close + 1;
    } else if (/[A-Za-z]/.test(char)) {
      let end = at;
      while (pattern[end] === char) end++;
      const group = pattern.slice(at, end);
      const field = FIELDS[group];
      if (field === undefined) {
        throw new SqlNotSupportedError(
          `the datetime pattern ${JSON.stringify(pattern)} uses ${JSON.stringify(group)}, which Ebb does not translate (it knows ${Object.keys(FIELDS).join(", ")})`,
        );
      }
      out += field;
      at = end;
    } else {
      out += char === "%" ? "%%" : char;
      at++;
    }
  }
  return out;
}
