import { z } from "zod";
import { ResourceNotFoundError, InvalidStateError } from "../../api/errors.ts";
import { InvalidParameterError } from "../../errors/coded-error.ts";
import { ObjectNotFoundError } from "../../object-store/errors.ts";
import { statementChunkKey, statementKey } from "../../store/bucket-layout.ts";
import type { ResultChunk } from "../../sql/index.ts";
import type { ControlPlane } from "../plane/control-plane.ts";
import { resultChunkSchema, statementResponseSchema, type StatementResponse } from "./statement-response.ts";

/**
 * A statement's answer, kept so that the Statement Execution API's follow-up calls work as a script
 * that polls expects: `GET …/statements/{id}` answers it again, `…/result/chunks/{n}` its one chunk,
 * `…/cancel` receipt. Databricks keeps a finished statement at least 12 hours and then answers 404;
 * Ebb keeps it 24 hours (the bucket's lifecycle rule removes the file a day later).
 */

export const STATEMENT_RETENTION_MS = 24 * 60 * 60 * 1000;

/** What keeping and reading answers needs of the plane: its bucket and its clock. */
type Answers = Pick<ControlPlane, "bucket" | "clock">;

/** An answer as kept: when it goes, and the answer itself. */
const keptAnswerSchema = z.object({
  expires_at: z.number(),
  response: statementResponseSchema,
}) satisfies z.ZodType<KeptAnswer>;
interface KeptAnswer {
  readonly expires_at: number;
  readonly response: StatementResponse;
}

export async function keepStatementAnswer(plane: Answers, response: StatementResponse): Promise<void> {
  const kept: KeptAnswer = { expires_at: plane.clock() + STATEMENT_RETENTION_MS, response };
  await plane.bucket.put(statementKey(response.statement_id), new TextEncoder().encode(JSON.stringify(kept)));
}

/** A chunk past the first (which the answer carries inline), kept beside the answer as it is made. */
export async function keepStatementChunk(
  plane: Answers,
  statementId: string,
  chunk: ResultChunk,
): Promise<void> {
  await plane.bucket.put(
    statementChunkKey(statementId, chunk.chunk_index),
    new TextEncoder().encode(JSON.stringify(chunk)),
  );
}

/** `GET /api/2.0/sql/statements/{statement_id}`. */
export async function getStatement(plane: Answers, statementId: string): Promise<StatementResponse> {
  return (await keptAnswer(plane, statementId)).response;
}

/** `GET /api/2.0/sql/statements/{statement_id}/result/chunks/{chunk_index}`: the `ResultData`. */
export async function getStatementResultChunk(
  plane: Answers,
  statementId: string,
  chunkIndex: number,
): Promise<NonNullable<StatementResponse["result"]>> {
  const { response } = await keptAnswer(plane, statementId);
  if (response.status.state !== "SUCCEEDED" || response.result === undefined) {
    throw new InvalidStateError(
      `statement ${statementId} ended ${response.status.state} and has no result: read its status.error, fix the statement and run it again`,
    );
  }
  const count = response.manifest?.total_chunk_count ?? 1;
  if (chunkIndex >= count) {
    throw new InvalidParameterError(
      `statement ${statementId}'s result has ${count === 1 ? "one chunk, index 0" : `${count} chunks, indexes 0 to ${count - 1}`}; there is no chunk ${chunkIndex}`,
    );
  }
  if (chunkIndex === 0) return response.result;
  return resultChunkSchema.parse(
    JSON.parse(new TextDecoder().decode(await plane.bucket.get(statementChunkKey(statementId, chunkIndex)))),
  );
}

/** `POST /api/2.0/sql/statements/{statement_id}/cancel`: every statement is done when it is answered. */
export async function cancelStatement(plane: Answers, statementId: string): Promise<Record<string, never>> {
  await keptAnswer(plane, statementId);
  return {};
}

async function keptAnswer(plane: Answers, statementId: string): Promise<KeptAnswer> {
  let kept: KeptAnswer;
  try {
    kept = keptAnswerSchema.parse(
      JSON.parse(new TextDecoder().decode(await plane.bucket.get(statementKey(statementId)))),
    );
  } catch (error) {
    if (!(error instanceof ObjectNotFoundError)) throw error;
    throw gone(statementId);
  }
  if (kept.expires_at <= plane.clock()) throw gone(statementId);
  return kept;
}

function gone(statementId: string): ResourceNotFoundError {
  return new ResourceNotFoundError(
    `no statement ${statementId}: Ebb keeps a statement's answer for 24 hours after it ran; run the statement again (POST /api/2.0/sql/statements)`,
  );
}
