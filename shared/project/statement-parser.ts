import { PROJECT_ISSUE_CODES, StatementProblem } from "./errors.ts";
import { isSymbol, isWord, type Token } from "./sql-tokens.ts";
import type {
  AutoCdcFlowStatement,
  ColumnClause,
  ExpectationClause,
  NameRef,
  PipelineStatement,
  QueryText,
  TableStatement,
} from "./statements.ts";
import { describeToken, syntaxProblem, TokenCursor } from "./token-cursor.ts";

/**
 * Reads one pipeline statement (its tokens, between `;`s) as SDP and Lakeflow document it:
 *
 *   CREATE [OR REFRESH] [TEMPORARY | PRIVATE] STREAMING TABLE name [(columns, CONSTRAINT …)]
 *     [USING DELTA] [PARTITIONED BY (…)] [CLUSTER BY (…)] [COMMENT '…'] [TBLPROPERTIES (…)] [AS query]
 *   CREATE [OR REFRESH] [TEMPORARY | PRIVATE] MATERIALIZED VIEW name … AS query
 *   CREATE [OR REPLACE] [TEMPORARY] VIEW name [COMMENT '…'] AS query
 *   CREATE FLOW name [COMMENT '…'] AS INSERT INTO target [BY NAME] query
 *   CREATE FLOW name [COMMENT '…'] AS AUTO CDC INTO target FROM source KEYS (…) [IGNORE NULL UPDATES]
 *     [APPLY AS DELETE WHEN …] [APPLY AS TRUNCATE WHEN …] SEQUENCE BY … [COLUMNS …]
 *     [STORED AS SCD TYPE 1 | 2] [TRACK HISTORY ON …]
 *
 * Only the envelope is parsed; a query stays tokens for the query scan. `COMMENT` is read and not
 * kept (Ebb's tables carry no comments). `CLUSTER BY` is refused: Ebb writes no clustered tables.
 */

const unsupported = (offset: number, message: string) =>
  new StatementProblem(offset, PROJECT_ISSUE_CODES.unsupportedClause, message);

/** The keywords that end an AUTO CDC clause's condition or list. */
const CDC_CLAUSES = ["KEYS", "IGNORE", "APPLY", "SEQUENCE", "COLUMNS", "STORED", "TRACK"];

/** `tokens` are one statement's, from the file `text` (which messages and kept texts are cut from). */
export function parseStatement(tokens: readonly Token[], text: string): PipelineStatement {
  return new StatementReader(tokens, text).statement();
}

class StatementReader extends TokenCursor {
  statement(): PipelineStatement {
    const first = this.peek();
    if (isWord(first, "SET"))
      throw unsupported(
        first!.start,
        "SET in a pipeline file is not read: put the key in the spec's configuration",
      );
    if (isWord(first, "APPLY"))
      throw unsupported(first!.start, "write APPLY CHANGES INTO as CREATE FLOW <name> AS AUTO CDC INTO …");
    this.expectWord("CREATE", "a pipeline file holds CREATE statements");
    const orRefresh = this.acceptWords("OR", "REFRESH") || this.acceptWords("OR", "REPLACE");
    void orRefresh;
    const temporary = this.acceptWord("TEMPORARY") || this.acceptWord("PRIVATE");
    if (this.acceptWords("STREAMING", "TABLE")) return this.table("streaming_table", first!.start);
    if (this.acceptWords("MATERIALIZED", "VIEW")) return this.table("materialized_view", first!.start);
    if (this.acceptWords("LIVE", "TABLE")) return this.table("materialized_view", first!.start);
    if (this.acceptWord("LIVE")) this.expectWord("VIEW", "write CREATE TEMPORARY VIEW");
    else if (!temporary && this.acceptWord("FLOW")) return this.flow(first!.start);
    else if (!this.acceptWord("VIEW")) {
      const at = this.peek() ?? first!;
      throw syntaxProblem(
        at.start,
        `expected STREAMING TABLE, MATERIALIZED VIEW, TEMPORARY VIEW or FLOW after CREATE, found ${describeToken(this.peek())}`,
      );
    }
    const name = this.name("the view's name");
    this.skipComment();
    this.expectWord("AS", "a view needs AS <query>");
    return { kind: "view", name, query: this.rest("the view's query"), start: first!.start };
  }

  private table(kind: TableStatement["kind"], start: number): TableStatement {
    if (this.acceptWords("IF", "NOT", "EXISTS")) {
      // Accepted as Databricks does: a pipeline's table is defined once either way.
    }
    const name = this.name("the table's name");
    const columns: ColumnClause[] = [];
    const expectations: ExpectationClause[] = [];
    if (isSymbol(this.peek(), "(")) this.tableElements(columns, expectations);
    let partitionBy: string[] | undefined;
    const properties: Record<string, string> = {};
    for (;;) {
      const token = this.peek();
      if (this.acceptWord("USING")) {
        const format = this.next("a table format after USING");
        if (!isWord(format, "DELTA"))
          throw unsupported(
            format.start,
            `Ebb's tables are Delta tables: write USING DELTA or leave USING out`,
          );
      } else if (this.acceptWords("PARTITIONED", "BY")) {
        partitionBy = this.columnList("PARTITIONED BY");
      } else if (this.acceptWords("CLUSTER", "BY")) {
        throw unsupported(
          token!.start,
          "CLUSTER BY (liquid clustering) is not carried out by Ebb: use PARTITIONED BY, or leave it out",
        );
      } else if (isWord(token, "COMMENT")) {
        this.skipComment();
      } else if (this.acceptWord("TBLPROPERTIES")) {
        Object.assign(properties, this.propertyList());
      } else if (isWord(token, "LOCATION", "SCHEDULE", "ROW", "WITH", "REFRESH", "TRIGGER")) {
        throw unsupported(
          token!.start,
          `${token!.value.toUpperCase()} is not carried out by Ebb: tables live in Ebb's bucket and refresh when an update runs; remove it`,
        );
      } else {
        break;
      }
    }
    let query: QueryText | undefined;
    if (this.acceptWord("AS")) query = this.rest("the table's query");
    else if (this.peek() !== undefined)
      throw syntaxProblem(
        this.peek()!.start,
        `expected AS <query> or the end of the statement, found ${describeToken(this.peek())}`,
      );
    if (kind === "materialized_view" && query === undefined)
      throw syntaxProblem(start, `materialized view ${name.parts.join(".")} needs AS <query>`);
    return {
      kind,
      name,
      columns,
      expectations,
      ...(partitionBy ? { partitionBy } : {}),
      properties,
      ...(query ? { query } : {}),
      start,
    };
  }

  /** `(col TYPE [NOT NULL] [COMMENT '…'], …, CONSTRAINT name EXPECT (cond) [ON VIOLATION …])`. */
  private tableElements(columns: ColumnClause[], expectations: ExpectationClause[]): void {
    this.expectSymbol("(");
    do {
      const token = this.peek();
      if (this.acceptWord("CONSTRAINT")) {
        const name = this.identifier("the expectation's name");
        if (!this.acceptWord("EXPECT")) {
          throw unsupported(
            this.peek()?.start ?? token!.start,
            `constraint ${name} is not an expectation: Ebb reads CONSTRAINT <name> EXPECT (<condition>) [ON VIOLATION DROP ROW | FAIL UPDATE]`,
          );
        }
        const condition = this.parenthesizedText("the expectation's condition");
        let onViolation: ExpectationClause["onViolation"] = "warn";
        if (this.acceptWords("ON", "VIOLATION")) {
          if (this.acceptWords("DROP", "ROW")) onViolation = "drop";
          else if (this.acceptWords("FAIL", "UPDATE")) onViolation = "fail";
          else
            throw syntaxProblem(
              this.peek()?.start ?? this.textEnd,
              "expected DROP ROW or FAIL UPDATE after ON VIOLATION",
            );
        }
        expectations.push({ name, condition, onViolation, start: token!.start });
      } else if (isWord(token, "PRIMARY", "FOREIGN")) {
        throw unsupported(
          token!.start,
          "informational keys are not kept by Ebb: remove the PRIMARY/FOREIGN KEY clause",
        );
      } else {
        const name = this.identifier("a column name or CONSTRAINT");
        const typeStart = this.peek();
        if (typeStart === undefined || isSymbol(typeStart, ",") || isSymbol(typeStart, ")"))
          throw syntaxProblem(typeStart?.start ?? this.textEnd, `column ${name} needs a type`);
        let depth = 0;
        let typeEnd = typeStart;
        while (this.peek() !== undefined) {
          const t = this.peek()!;
          if (
            depth === 0 &&
            (isSymbol(t, ",") ||
              isSymbol(t, ")") ||
              isWord(t, "NOT", "COMMENT", "GENERATED", "DEFAULT", "MASK"))
          )
            break;
          if (isSymbol(t, "(") || isSymbol(t, "<")) depth++;
          if (isSymbol(t, ")") || isSymbol(t, ">")) depth--;
          typeEnd = t;
          this.i++;
        }
        for (;;) {
          const t = this.peek();
          if (this.acceptWords("NOT", "NULL")) continue;
          if (isWord(t, "COMMENT")) {
            this.skipComment();
            continue;
          }
          if (isWord(t, "GENERATED", "DEFAULT", "MASK"))
            throw unsupported(
              t!.start,
              `${t!.value.toUpperCase()} on a column is not carried out by Ebb: compute the value in the query`,
            );
          break;
        }
        columns.push({ name, type: this.textOf(typeStart, typeEnd) });
      }
    } while (this.acceptSymbol(","));
    this.expectSymbol(")");
  }

  private flow(start: number): PipelineStatement {
    const name = this.name("the flow's name");
    this.skipComment();
    this.expectWord("AS", "a flow is CREATE FLOW <name> AS INSERT INTO … or AS AUTO CDC INTO …");
    if (this.acceptWords("INSERT", "INTO")) {
      const once = this.peek();
      if (this.acceptWord("ONCE"))
        throw unsupported(
          once!.start,
          "INSERT INTO ONCE (a one-time backfill flow) is not carried out by Ebb yet",
        );
      const target = this.name("the flow's target table");
      this.acceptWords("BY", "NAME");
      return { kind: "append_flow", name, target, query: this.rest("the flow's query"), start };
    }
    if (this.acceptWords("AUTO", "CDC", "INTO") || this.acceptWords("APPLY", "CHANGES", "INTO"))
      return this.autoCdc(name, start);
    throw syntaxProblem(
      this.peek()?.start ?? this.textEnd,
      `expected INSERT INTO or AUTO CDC INTO, found ${describeToken(this.peek())}`,
    );
  }

  private autoCdc(name: NameRef, start: number): AutoCdcFlowStatement {
    const target = this.name("the AUTO CDC target table");
    this.expectWord("FROM", "AUTO CDC INTO <target> FROM <source> KEYS (…) SEQUENCE BY …");
    const fromStart = this.i;
    while (this.peek() !== undefined && !isWord(this.peek(), ...CDC_CLAUSES)) this.skipBalanced();
    const from = this.slice(fromStart, this.i, "the AUTO CDC source");
    let keys: string[] | undefined;
    let sequenceBy: string[] | undefined;
    let applyAsDeletes: string | undefined;
    let applyAsTruncates: string | undefined;
    let columnList: string[] | undefined;
    let exceptColumnList: string[] | undefined;
    let scdType: 1 | 2 = 1;
    let trackHistoryColumnList: string[] | undefined;
    let trackHistoryExceptColumnList: string[] | undefined;
    let ignoreNullUpdates = false;
    while (this.peek() !== undefined) {
      const token = this.peek()!;
      if (this.acceptWord("KEYS")) keys = this.columnList("KEYS");
      else if (this.acceptWords("IGNORE", "NULL", "UPDATES")) ignoreNullUpdates = true;
      else if (this.acceptWords("APPLY", "AS", "DELETE", "WHEN"))
        applyAsDeletes = this.clauseText("APPLY AS DELETE WHEN");
      else if (this.acceptWords("APPLY", "AS", "TRUNCATE", "WHEN"))
        applyAsTruncates = this.clauseText("APPLY AS TRUNCATE WHEN");
      else if (this.acceptWords("SEQUENCE", "BY")) sequenceBy = this.sequence();
      else if (this.acceptWord("COLUMNS")) {
        if (this.acceptSymbol("*")) {
          this.expectWord("EXCEPT", "write COLUMNS * EXCEPT (…) or COLUMNS a, b");
          exceptColumnList = this.columnList("COLUMNS * EXCEPT");
        } else columnList = this.bareList();
      } else if (this.acceptWords("STORED", "AS", "SCD", "TYPE")) {
        const type = this.next("1 or 2 after STORED AS SCD TYPE");
        if (type.kind !== "number" || (type.value !== "1" && type.value !== "2"))
          throw syntaxProblem(type.start, `STORED AS SCD TYPE is 1 or 2, not ${type.value}`);
        scdType = type.value === "1" ? 1 : 2;
      } else if (this.acceptWords("TRACK", "HISTORY", "ON")) {
        if (this.acceptSymbol("*")) {
          this.expectWord("EXCEPT", "write TRACK HISTORY ON * EXCEPT (…) or TRACK HISTORY ON a, b");
          trackHistoryExceptColumnList = this.columnList("TRACK HISTORY ON * EXCEPT");
        } else
          trackHistoryColumnList = isSymbol(this.peek(), "(")
            ? this.columnList("TRACK HISTORY ON")
            : this.bareList();
      } else
        throw syntaxProblem(
          token.start,
          `expected an AUTO CDC clause (KEYS, SEQUENCE BY, APPLY AS DELETE WHEN, COLUMNS, STORED AS SCD TYPE, TRACK HISTORY ON), found ${describeToken(token)}`,
        );
    }
    if (!keys) throw syntaxProblem(start, "AUTO CDC needs KEYS (<columns>)");
    if (!sequenceBy) throw syntaxProblem(start, "AUTO CDC needs SEQUENCE BY <column>");
    return {
      kind: "auto_cdc_flow",
      name,
      target,
      from,
      keys,
      sequenceBy,
      ...(applyAsDeletes !== undefined ? { applyAsDeletes } : {}),
      ...(applyAsTruncates !== undefined ? { applyAsTruncates } : {}),
      ...(columnList ? { columnList } : {}),
      ...(exceptColumnList ? { exceptColumnList } : {}),
      scdType,
      ...(trackHistoryColumnList ? { trackHistoryColumnList } : {}),
      ...(trackHistoryExceptColumnList ? { trackHistoryExceptColumnList } : {}),
      ignoreNullUpdates,
      start,
    };
  }

  /** `SEQUENCE BY col` or `SEQUENCE BY struct(a, b)` (compared in order). */
  private sequence(): string[] {
    if (isWord(this.peek(), "STRUCT") && isSymbol(this.tokens[this.i + 1], "(")) {
      this.i++;
      return this.columnList("SEQUENCE BY struct");
    }
    return [this.identifier("the SEQUENCE BY column")];
  }

  /** The text of a condition up to the next AUTO CDC clause. */
  private clauseText(what: string): string {
    const from = this.i;
    while (this.peek() !== undefined && !isWord(this.peek(), ...CDC_CLAUSES)) this.skipBalanced();
    if (from === this.i) throw syntaxProblem(this.peek()?.start ?? this.textEnd, `${what} needs a condition`);
    return this.textOf(this.tokens[from]!, this.tokens[this.i - 1]!);
  }

  private propertyList(): Record<string, string> {
    this.expectSymbol("(", "TBLPROPERTIES takes ('key' = 'value', …)");
    const properties: Record<string, string> = {};
    do {
      const key = this.propertyKey();
      this.acceptSymbol("=");
      const value = this.next("a property value");
      if (value.kind === "symbol") throw syntaxProblem(value.start, `property ${key} needs a value`);
      properties[key] = value.value;
    } while (this.acceptSymbol(","));
    this.expectSymbol(")");
    return properties;
  }

  /** `'delta.appendOnly'` or `delta.appendOnly` (dotted words). */
  private propertyKey(): string {
    const first = this.next("a property key");
    if (first.kind === "string") return first.value;
    if (first.kind !== "word" && first.kind !== "quoted")
      throw syntaxProblem(first.start, `expected a property key, found ${describeToken(first)}`);
    let key = first.value;
    while (isSymbol(this.peek(), ".")) {
      this.i++;
      key += `.${this.identifier("a property key part")}`;
    }
    return key;
  }

  private skipComment(): void {
    if (this.acceptWord("COMMENT")) {
      const text = this.next("the comment's text");
      if (text.kind !== "string") throw syntaxProblem(text.start, "COMMENT takes a quoted string");
    }
  }
}
