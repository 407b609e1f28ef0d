import { InvalidParameterError } from "../../errors/coded-error.ts";
import type { PipelineRecord } from "../../store/pipelines-repository.ts";

/**
 * `GET /api/2.0/pipelines` in pages, newest first, as Databricks pages it: `max_results` per page and
 * a `next_page_token` while more follow (the SDKs' `list_pipelines` iterators follow it). A token
 * holds the last pipeline its page showed (creation time and id, the listing's order), so a pipeline
 * created or deleted between two pages neither repeats nor hides the others. Without `max_results`,
 * every pipeline in one answer.
 */

export interface PipelinePageRequest {
  readonly max_results?: number;
  readonly page_token?: string;
}

interface PageToken {
  readonly createdAt: number;
  readonly pipelineId: string;
}

/** The page of `records` (newest first, as the repository lists them) the request asks for. */
export function pipelinePage(
  records: readonly PipelineRecord[],
  request: PipelinePageRequest,
): { readonly shown: readonly PipelineRecord[]; readonly nextPageToken?: string } {
  const after = request.page_token === undefined ? undefined : readToken(request.page_token);
  const rest = after === undefined ? records : records.filter((record) => listedAfter(record, after));
  const limit = request.max_results ?? rest.length;
  const shown = rest.slice(0, limit);
  const last = shown.at(-1);
  if (rest.length <= limit || last === undefined) return { shown };
  return { shown, nextPageToken: writeToken({ createdAt: last.createdAt, pipelineId: last.pipelineId }) };
}

/** Newest first, then by id: the repository's order. */
function listedAfter(record: PipelineRecord, token: PageToken): boolean {
  if (record.createdAt !== token.createdAt) return record.createdAt < token.createdAt;
  return record.pipelineId.localeCompare(token.pipelineId) > 0;
}

function writeToken(token: PageToken): string {
  return Buffer.from(JSON.stringify(token)).toString("base64url");
}

function readToken(text: string): PageToken {
  try {
    const parsed = JSON.parse(Buffer.from(text, "base64url").toString("utf8")) as Partial<PageToken> | null;
    if (parsed && Number.isSafeInteger(parsed.createdAt) && typeof parsed.pipelineId === "string") {
      return { createdAt: parsed.createdAt!, pipelineId: parsed.pipelineId };
    }
  } catch {
    // refused below
  }
  throw new InvalidParameterError(
    "page_token is not one the pipeline listing issued: pass next_page_token unchanged",
  );
}
