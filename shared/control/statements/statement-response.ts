import type { StatementResult } from "../../sql/index.ts";

/**
 * A statement's answer (Databricks' `StatementResponse`): made by sql-statements.ts, kept and answered
 * again by statement-answers.ts, so both read it from here.
 */
export interface StatementResponse extends Partial<StatementResult> {
  readonly statement_id: string;
  readonly status: {
    readonly state: "SUCCEEDED" | "FAILED";
    readonly error?: { readonly error_code: string; readonly message: string };
  };
  /** Request fields Ebb accepted but does not act on, and why. */
  readonly notices?: readonly string[];
}
