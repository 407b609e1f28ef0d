import { CodedError } from "../errors/coded-error.ts";

/**
 * `filter` of `GET /api/2.0/pipelines` (the SDKs' `list_pipelines(filter=…)`), as Databricks reads it:
 * `name LIKE '<pattern>'`, `%` matching any run of characters, case-insensitive. Databricks' other
 * form, `notebook='<path>'`, selects pipelines by a notebook library; Ebb's pipelines have none, and
 * composite filters Databricks refuses too: both are refused naming the form Ebb reads.
 */

/** A `filter` that is not `name LIKE '<pattern>'`. */
export class UnsupportedPipelineFilterError extends CodedError {
  override readonly name = "UnsupportedPipelineFilterError";
  override readonly errorCode = "UNSUPPORTED_PIPELINE_FILTER";
  override readonly httpStatus = 400;
  constructor(readonly filter: string) {
    super(
      `filter ${JSON.stringify(filter.slice(0, 200))} is not one the pipeline listing reads: only name LIKE '<pattern>' is (% matches any characters, e.g. name LIKE '%orders%'); Ebb's pipelines have no notebooks, and composite filters are not supported: list without filter, or filter by name`,
    );
  }
}

const NAME_LIKE = /^\s*name\s+like\s+'((?:[^']|'')*)'\s*$/i;

/** The pipeline names `filter` selects; without a filter, every name. */
export function pipelineNameFilter(filter: string | undefined): (name: string) => boolean {
  if (filter === undefined || filter.trim() === "") return () => true;
  const match = NAME_LIKE.exec(filter);
  if (!match) throw new UnsupportedPipelineFilterError(filter);
  const pattern = match[1]!.replaceAll("''", "'");
  const source = pattern
    .split("%")
    .map((literal) => literal.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"))
    .join(".*");
  const like = new RegExp(`^${source}$`, "is");
  return (name) => like.test(name);
}
