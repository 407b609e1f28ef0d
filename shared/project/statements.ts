import type { Token } from "./sql-tokens.ts";

/**
 * The pipeline statements of SDP and Lakeflow SQL, as the statement parser reads them: the DDL
 * envelope as data, each query kept as its tokens (and so its text and offsets) for the query scan.
 */

/** A possibly qualified name (`orders`, `sales.orders`, `LIVE.orders`) and where it was written. */
export interface NameRef {
  readonly parts: readonly string[];
  readonly start: number;
}

/** A query: its tokens, which span `[start, end)` of the file's text. */
export interface QueryText {
  readonly tokens: readonly Token[];
  readonly start: number;
  readonly end: number;
}

export const VIOLATION_ACTIONS = ["warn", "drop", "fail"] as const;

/** `CONSTRAINT name EXPECT (condition) [ON VIOLATION DROP ROW | FAIL UPDATE]`. */
export interface ExpectationClause {
  readonly name: string;
  readonly condition: string;
  readonly onViolation: (typeof VIOLATION_ACTIONS)[number];
  readonly start: number;
}

/** A declared column: its name and its Spark type as written. */
export interface ColumnClause {
  readonly name: string;
  readonly type: string;
}

/** `CREATE [OR REFRESH] [TEMPORARY] STREAMING TABLE | MATERIALIZED VIEW name […] [AS query]`. */
export interface TableStatement {
  readonly kind: "streaming_table" | "materialized_view";
  readonly name: NameRef;
  readonly columns: readonly ColumnClause[];
  readonly expectations: readonly ExpectationClause[];
  readonly partitionBy?: readonly string[];
  readonly properties: Readonly<Record<string, string>>;
  readonly query?: QueryText;
  readonly start: number;
}

/** `CREATE [TEMPORARY] VIEW name AS query`. */
export interface ViewStatement {
  readonly kind: "view";
  readonly name: NameRef;
  readonly query: QueryText;
  readonly start: number;
}

/** `CREATE FLOW name AS INSERT INTO target [BY NAME] query`. */
export interface AppendFlowStatement {
  readonly kind: "append_flow";
  readonly name: NameRef;
  readonly target: NameRef;
  readonly query: QueryText;
  readonly start: number;
}

/** `CREATE FLOW name AS AUTO CDC INTO target FROM source KEYS … SEQUENCE BY …`. */
export interface AutoCdcFlowStatement {
  readonly kind: "auto_cdc_flow";
  readonly name: NameRef;
  readonly target: NameRef;
  /** The `FROM` source as a query reading it (`FROM STREAM(x)` becomes the tokens `STREAM(x)`). */
  readonly from: QueryText;
  readonly keys: readonly string[];
  readonly sequenceBy: readonly string[];
  readonly applyAsDeletes?: string;
  readonly applyAsTruncates?: string;
  readonly columnList?: readonly string[];
  readonly exceptColumnList?: readonly string[];
  readonly scdType: 1 | 2;
  readonly trackHistoryColumnList?: readonly string[];
  readonly trackHistoryExceptColumnList?: readonly string[];
  readonly ignoreNullUpdates: boolean;
  readonly start: number;
}

export type PipelineStatement = TableStatement | ViewStatement | AppendFlowStatement | AutoCdcFlowStatement;
