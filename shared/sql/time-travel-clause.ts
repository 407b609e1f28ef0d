import { SqlNotSupportedError } from "./errors.ts";
import { isSymbol, isWord, significant, tokenize, type Token } from "./spark-sql-tokens.ts";

/**
 * Delta's time travel after a table name in a FROM or JOIN (Spark's and Databricks' syntax), pure:
 *
 * - `t VERSION AS OF 3`, `t FOR SYSTEM_VERSION AS OF 3`;
 * - `t TIMESTAMP AS OF '2026-09-29 08:36:55'`, `t FOR SYSTEM_TIME AS OF '…'`;
 * - `t@v3`, and `t@20260929083655000` (`yyyyMMddHHmmssSSS`, UTC).
 *
 * The caller resolves the version a timestamp names (Delta's rule: the latest commit at or before it)
 * and hands the query that version's files.
 */

export type TimeTravel = { readonly version: number } | { readonly timestamp: string };

/** The clause starting at token `from` (after the name, spaces allowed), and the index after it. */
export function timeTravelAt(
  tokens: readonly Token[],
  from: number,
  to: number,
): { readonly at: TimeTravel; readonly end: number } | undefined {
  const next = (i: number) => {
    let j = i;
    while (j < to && !significant(tokens[j]!)) j++;
    return j;
  };
  // `t@v3` / `t@yyyyMMddHHmmssSSS`: no spaces.
  if (isSymbol(tokens[from], "@")) {
    const spec = tokens[from + 1];
    const version = spec?.kind === "word" ? /^v(\d+)$/i.exec(spec.value)?.[1] : undefined;
    if (version !== undefined) return { at: { version: Number(version) }, end: from + 2 };
    if (spec?.kind === "number" && /^\d{17}$/.test(spec.value)) {
      const d = spec.value;
      const timestamp = `${d.slice(0, 4)}-${d.slice(4, 6)}-${d.slice(6, 8)} ${d.slice(8, 10)}:${d.slice(10, 12)}:${d.slice(12, 14)}.${d.slice(14)}`;
      return { at: { timestamp }, end: from + 2 };
    }
    throw new SqlNotSupportedError(
      `"@${spec?.text ?? ""}" is not a time travel spec: write @v<version> or @yyyyMMddHHmmssSSS`,
    );
  }
  let i = next(from);
  if (isWord(tokens[i], "FOR")) {
    const kind = next(i + 1);
    if (!isWord(tokens[kind], "SYSTEM_VERSION") && !isWord(tokens[kind], "SYSTEM_TIME")) return undefined;
    i = kind;
  } else if (!isWord(tokens[i], "VERSION") && !isWord(tokens[i], "TIMESTAMP")) {
    return undefined;
  }
  const byVersion = isWord(tokens[i], "VERSION") || isWord(tokens[i], "SYSTEM_VERSION");
  const as = next(i + 1);
  const of = next(as + 1);
  if (!isWord(tokens[as], "AS") || !isWord(tokens[of], "OF")) return undefined;
  const value = next(of + 1);
  const token = tokens[value];
  if (byVersion) {
    if (token?.kind === "number" && /^\d+$/.test(token.value))
      return { at: { version: Number(token.value) }, end: value + 1 };
    throw new SqlNotSupportedError(
      `VERSION AS OF takes a version number here, not ${token?.text ?? "nothing"}`,
    );
  }
  if (token?.kind === "string") return { at: { timestamp: token.value }, end: value + 1 };
  throw new SqlNotSupportedError(
    `TIMESTAMP AS OF takes a timestamp string here ('yyyy-MM-dd HH:mm:ss', UTC), not ${token?.text ?? "nothing"}`,
  );
}

/** A time-travelled reference the query endpoint loads: its relation name and the version it names. */
export interface TravelledReference {
  readonly relation: string;
  readonly at: TimeTravel;
}

/** The relation names given to time-travelled references (a user's own names cannot start so). */
const TRAVEL_PREFIX = "__ebb_travel_";

/**
 * The query endpoint's SQL (DuckDB's, over one table known by `names`: `t`, its name, its full
 * name) with each time-travelled reference to that table (`FROM t VERSION AS OF 3`) renamed to a
 * relation of its own, which the caller loads at that version. Everything else passes through as
 * written.
 */
export function travelledReferences(
  sql: string,
  names: readonly string[],
): { readonly sql: string; readonly references: readonly TravelledReference[] } {
  const tokens = tokenize(sql);
  const wanted = new Set(names.map((name) => name.toLowerCase()));
  const references: TravelledReference[] = [];
  let out = "";
  let i = 0;
  while (i < tokens.length) {
    const token = tokens[i]!;
    if ((token.kind === "word" || token.kind === "quoted") && followsFromOrJoin(tokens, i)) {
      let end = i + 1;
      const parts = [token.value];
      while (isSymbol(tokens[end], ".") && ["word", "quoted"].includes(tokens[end + 1]?.kind ?? "")) {
        parts.push(tokens[end + 1]!.value);
        end += 2;
      }
      const travel = wanted.has(parts.join(".").toLowerCase())
        ? timeTravelAt(tokens, end, tokens.length)
        : undefined;
      if (travel) {
        const relation = `${TRAVEL_PREFIX}${references.length + 1}`;
        references.push({ relation, at: travel.at });
        out += relation;
        i = travel.end;
        continue;
      }
      out += tokens
        .slice(i, end)
        .map((t) => t.text)
        .join("");
      i = end;
      continue;
    }
    out += token.text;
    i += 1;
  }
  return { sql: out, references };
}

function followsFromOrJoin(tokens: readonly Token[], i: number): boolean {
  for (let j = i - 1; j >= 0; j--) {
    const token = tokens[j]!;
    if (!significant(token)) continue;
    return isWord(token, "FROM") || isWord(token, "JOIN");
  }
  return false;
}
