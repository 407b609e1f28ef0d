import { z } from "zod";
import type { ResultChunk, StatementResult } from "../../sql/index.ts";

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

/** A result chunk as kept in the bucket (Ebb wrote it, but persisted data is parsed, not cast). */
export const resultChunkSchema = z.object({
  chunk_index: z.number().int(),
  row_offset: z.number().int(),
  row_count: z.number().int(),
  data_array: z.array(z.array(z.string().nullable())),
  next_chunk_index: z.number().int().optional(),
  next_chunk_internal_link: z.string().optional(),
}) satisfies z.ZodType<ResultChunk>;

const columnInfoSchema = z.object({
  name: z.string(),
  position: z.number().int(),
  type_name: z.string(),
  type_text: z.string(),
  type_precision: z.number().int().optional(),
  type_scale: z.number().int().optional(),
});

/** A statement's answer as kept in the bucket. */
export const statementResponseSchema = z.object({
  statement_id: z.string(),
  status: z.object({
    state: z.enum(["SUCCEEDED", "FAILED"]),
    error: z.object({ error_code: z.string(), message: z.string() }).optional(),
  }),
  notices: z.array(z.string()).optional(),
  manifest: z
    .object({
      format: z.literal("JSON_ARRAY"),
      schema: z.object({ column_count: z.number().int(), columns: z.array(columnInfoSchema) }),
      total_chunk_count: z.number().int(),
      chunks: z.array(
        z.object({
          chunk_index: z.number().int(),
          row_offset: z.number().int(),
          row_count: z.number().int(),
        }),
      ),
      total_row_count: z.number().int(),
      truncated: z.boolean(),
    })
    .optional(),
  result: resultChunkSchema.optional(),
}) satisfies z.ZodType<StatementResponse>;
