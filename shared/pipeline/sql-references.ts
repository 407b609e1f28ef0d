import { DuckDBInstance, type DuckDBConnection, type DuckDBPreparedStatement } from "@duckdb/node-api";
import { SqlParserUnavailableError } from "./errors.ts";
import { streamAggregationOf, type StreamAggregation } from "./stream-aggregation.ts";
import { conditionShapeProblem, quoteWindowKeyword } from "./sql-text/index.ts";

/**
 * The tables a query reads, found by DuckDB's own parser (`json_serialize_sql`), never by regular
 * expressions: a name in a string literal or a comment is not a reference, a CTE name is not a
 * reference, and a table inside a subquery, join or UNION is one.
 */

/** A table named in SQL. Parts left out are undefined; names are lower-cased (SQL folds case). */
export interface TableReference {
  readonly catalog?: string;
  readonly schema?: string;
  readonly table: string;
}

/** What the parser made of a query. `message` is DuckDB's, for the user. */
export type SqlAnalysis =
  | {
      readonly ok: true;
      readonly references: readonly TableReference[];
      /** How the query aggregates `source` (when it is a flow's query), if it does. */
      readonly aggregation?: StreamAggregation;
      /** The parsed statement (json_serialize_sql's shape), for the rules that read its structure. */
      readonly statement?: unknown;
    }
  | { readonly ok: false; readonly message: string };

export class SqlReferenceParser {
  /** Deparsing is prepared once: compiling plans deparses ~6 trees a dataset, and preparing each cost more than the work. */
  private deparser: Promise<DuckDBPreparedStatement> | undefined;
  /** One deparse at a time on the prepared statement (a bind must not meet another call's run). */
  private deparsing: Promise<unknown> = Promise.resolve();

  private constructor(
    private readonly instance: DuckDBInstance,
    private readonly connection: DuckDBConnection,
  ) {}

  /** One small in-memory DuckDB used only to parse; nothing the user writes is executed. */
  static async open(): Promise<SqlReferenceParser> {
    try {
      const instance = await DuckDBInstance.create(":memory:", {
        threads: "1",
        enable_external_access: "false",
        autoload_known_extensions: "false",
        autoinstall_known_extensions: "false",
      });
      return new SqlReferenceParser(instance, await instance.connect());
    } catch (cause) {
      throw new SqlParserUnavailableError("could not start DuckDB to parse SQL", { cause });
    }
  }

  /** The tables one SELECT statement reads. Anything but exactly one SELECT is an error. */
  async analyze(sql: string): Promise<SqlAnalysis> {
    // The SQL is a bound parameter: it is parsed, never run.
    const reader = await this.connection.runAndReadAll("SELECT json_serialize_sql($1::VARCHAR) AS tree", [
      quoteWindowKeyword(sql),
    ]);
    const tree = JSON.parse(String(reader.getRowObjectsJS()[0]?.["tree"])) as SerializedSql;
    if (tree.error) {
      const message = tree.error_message ?? "cannot be parsed";
      return {
        ok: false,
        message: message.includes("Only SELECT")
          ? "must be a single SELECT statement (a query), not DDL or DML"
          : message,
      };
    }
    if (!Array.isArray(tree.statements) || tree.statements.length !== 1) {
      return {
        ok: false,
        message: "must be exactly one SELECT statement (remove the extra statements after ';')",
      };
    }
    const aggregation = streamAggregationOf(tree.statements[0]);
    return {
      ok: true,
      references: tableReferencesIn(tree.statements[0]),
      ...(aggregation ? { aggregation } : {}),
      statement: tree.statements[0],
    };
  }

  /** SQL text of a serialized statement (one statement, as `analyze` gives it). */
  async deparse(statement: unknown): Promise<string> {
    // A node DuckDB made up (an INTERVAL's cast) has position 2^64-1, which a JS number rounds past
    // uint64: positions only place error messages, so an unknown one becomes 0.
    const text = JSON.stringify({ error: false, statements: [statement] }, (key, value: unknown) =>
      key === "query_location" && typeof value === "number" && value > Number.MAX_SAFE_INTEGER ? 0 : value,
    );
    this.deparser ??= this.connection.prepare("SELECT json_deserialize_sql($1::JSON) AS sql");
    const prepared = await this.deparser;
    const result = this.deparsing.then(async () => {
      prepared.bindVarchar(1, text);
      const reader = await prepared.runAndReadAll();
      return String(reader.getRowObjectsJS()[0]?.["sql"]);
    });
    this.deparsing = result.catch(() => undefined);
    return result;
  }

  /**
   * Whether `condition` is one boolean expression over the row's own columns (a flow's `owns`): it is
   * parsed as the only item of a SELECT with no FROM, and refused unless the tree is exactly that, so
   * text such as `true) FROM t WHERE (1` or a subquery reading a file never reaches a statement.
   */
  async analyzeCondition(condition: string): Promise<SqlAnalysis> {
    const reader = await this.connection.runAndReadAll("SELECT json_serialize_sql($1::VARCHAR) AS tree", [
      `SELECT (\n${condition}\n)`,
    ]);
    const tree = JSON.parse(String(reader.getRowObjectsJS()[0]?.["tree"])) as SerializedSql;
    if (tree.error) return { ok: false, message: tree.error_message ?? "cannot be parsed" };
    const problem = conditionShapeProblem(tree.statements);
    return problem === undefined ? { ok: true, references: [] } : { ok: false, message: problem };
  }

  close(): void {
    void this.deparser?.then((prepared) => prepared.destroySync()).catch(() => undefined);
    this.connection.closeSync();
    this.instance.closeSync();
  }
}

interface SerializedSql {
  readonly error?: boolean;
  readonly error_message?: string;
  readonly statements?: unknown[];
}

/**
 * Walks a serialized statement for `BASE_TABLE` nodes. A node with a `cte_map` puts its CTE names in
 * scope for itself and everything below it (its CTE bodies included, which covers recursive CTEs), so
 * an unqualified name matching a CTE in scope is not a table reference.
 */
export function tableReferencesIn(statement: unknown): TableReference[] {
  const found = new Map<string, TableReference>();
  const visit = (node: unknown, ctes: ReadonlySet<string>): void => {
    if (Array.isArray(node)) {
      for (const child of node) visit(child, ctes);
      return;
    }
    if (node === null || typeof node !== "object") return;
    const record = node as Record<string, unknown>;
    const scope = withCteNames(record, ctes);
    if (record["type"] === "BASE_TABLE" && typeof record["table_name"] === "string") {
      const reference = toReference(record);
      const qualified = reference.catalog !== undefined || reference.schema !== undefined;
      if (qualified || !scope.has(reference.table)) found.set(qualifiedName(reference), reference);
    }
    for (const value of Object.values(record)) visit(value, scope);
  };
  visit(statement, new Set());
  return [...found.values()];
}

/** `catalog.schema.table` with the parts that were written. */
export function qualifiedName(reference: TableReference): string {
  return [reference.catalog, reference.schema, reference.table]
    .filter((part) => part !== undefined)
    .join(".");
}

function withCteNames(node: Record<string, unknown>, outer: ReadonlySet<string>): ReadonlySet<string> {
  const entries = (node["cte_map"] as { map?: unknown } | undefined)?.map;
  if (!Array.isArray(entries) || entries.length === 0) return outer;
  const names = new Set(outer);
  for (const entry of entries) {
    const key = (entry as { key?: unknown }).key;
    if (typeof key === "string") names.add(key.toLowerCase());
  }
  return names;
}

function toReference(node: Record<string, unknown>): TableReference {
  const part = (key: string): string | undefined => {
    const value = node[key];
    return typeof value === "string" && value !== "" ? value.toLowerCase() : undefined;
  };
  const catalog = part("catalog_name");
  const schema = part("schema_name");
  return {
    ...(catalog !== undefined ? { catalog } : {}),
    ...(schema !== undefined ? { schema } : {}),
    table: String(node["table_name"]).toLowerCase(),
  };
}
