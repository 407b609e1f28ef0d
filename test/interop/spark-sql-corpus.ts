import { readFileSync } from "node:fs";
import path from "node:path";

/**
 * The SQL dialect's conformance corpus (spark-sql-corpus.txt) as queries, and the one normalization
 * both engines' answers go through before they are compared (spark_values.py prints Spark's values in
 * the forms DuckDB's node client prints).
 */

export interface CorpusEntry {
  readonly family: string;
  readonly expression: string;
  /** `SELECT <expression> AS v [FROM <relation> [GROUP BY …]]`, in Spark SQL. */
  readonly query: string;
  /** The query's ` FROM …` (empty without one). */
  readonly source: string;
  /** Line in the corpus file. */
  readonly line: number;
}

export function readCorpus(): CorpusEntry[] {
  const text = readFileSync(path.join(import.meta.dirname, "spark-sql-corpus.txt"), "utf8");
  const tables = new Map<string, string>();
  const entries: CorpusEntry[] = [];
  let family = "";
  let from = "";
  for (const [index, raw] of text.split("\n").entries()) {
    const line = raw.trim();
    if (line === "" || line.startsWith("#")) continue;
    const table = /^@table (\w+) = (.+)$/.exec(line);
    const header = /^== (.+?)(?: FROM (\w+)(.*))?$/.exec(line);
    if (table) tables.set(table[1]!, table[2]!);
    else if (header) {
      family = header[1]!;
      const relation = header[2] === undefined ? undefined : tables.get(header[2]);
      if (header[2] !== undefined && relation === undefined) throw new Error(`no @table ${header[2]}`);
      from = relation === undefined ? "" : ` FROM ${relation}${header[3] ?? ""}`;
    } else {
      entries.push({
        family,
        expression: line,
        query: `SELECT ${line} AS v${from}`,
        source: from,
        line: index + 1,
      });
    }
  }
  return entries;
}

/**
 * The corpus as Spark runs it: each family's expressions as the columns of one query (Spark plans a
 * query in tens of milliseconds on a busy machine; 500 queries would take minutes), a generator alone
 * (it multiplies the rows of its neighbours).
 */
export function sparkBatches(corpus: readonly CorpusEntry[]): { expressions: string[]; from: string }[] {
  const batches: { family: string; expressions: string[]; from: string }[] = [];
  for (const entry of corpus) {
    const last = batches.at(-1);
    if (last && last.family === entry.family && !entry.family.startsWith("generators")) {
      last.expressions.push(entry.expression);
    } else batches.push({ family: entry.family, expressions: [entry.expression], from: entry.source });
  }
  return batches.map(({ expressions, from }) => ({ expressions, from }));
}

/** One value, normalized: numbers by value, timestamps without a zero fraction or UTC offset, maps sorted. */
export function normalize(value: unknown): unknown {
  if (value === null || value === undefined) return null;
  if (typeof value === "boolean") return value;
  if (typeof value === "number" || typeof value === "bigint") return number(String(value));
  if (typeof value === "string") {
    if (/^-?\d+(\.\d+)?([eE][-+]?\d+)?$/.test(value)) return number(value);
    const time = /^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d)(\.\d+)?(\+00(:00)?)?$/.exec(value);
    if (time) return time[1]! + (time[2]?.replace(/0+$/, "").replace(/^\.$/, "") ?? "");
    return value;
  }
  if (Array.isArray(value)) {
    const isMap = value.length > 0 && value.every(isEntry);
    const items = value.map(normalize);
    return isMap ? { map: items.map((item) => JSON.stringify(item)).sort() } : items;
  }
  if (typeof value === "object") {
    // Struct fields compare by position: Spark names `struct(1, 'x')`'s fields col1, col2, DuckDB v1, v2.
    return { struct: Object.values(value).map(normalize) };
  }
  return String(value);
}

function isEntry(item: unknown): boolean {
  return typeof item === "object" && item !== null && Object.keys(item).join() === "key,value";
}

/** Integers exactly; others to 12 significant digits (float printing differs in the last places). */
function number(text: string): string {
  if (/^-?\d+$/.test(text)) return BigInt(text).toString();
  const parsed = Number(text);
  if (!Number.isFinite(parsed)) return text;
  return String(Number(parsed.toPrecision(12)));
}

/** The rows of one answer as a sorted list of texts (a multiset: the corpus sets no order). */
export function rowsKey(rows: readonly (readonly unknown[])[]): string {
  return JSON.stringify(rows.map((row) => JSON.stringify(row.map(normalize))).sort());
}
