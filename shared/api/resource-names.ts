import { BRANCH_NAME } from "../pipeline/branch-name.ts";
import { isIdentifier } from "../pipeline/identifier.ts";
import { isTimeOrderedId } from "../store/time-ordered-id.ts";
import { InvalidParameterError } from "../errors/coded-error.ts";

/**
 * Path parameters, checked before they reach a storage key (architecture.md "Storage"): a pipeline id
 * is a UUID, an update id a time-ordered id, a table `catalog.schema.table` of identifier parts. A
 * value that could escape its prefix (`..`, `/`, `%2F`) never matches.
 */

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** How the OpenAPI document describes each path parameter (the checks below decide). */
export const PATH_PARAMETERS: Readonly<
  Record<string, { description: string; schema: Record<string, unknown> }>
> = {
  pipeline_id: {
    description: "A pipeline id: the UUID create answered",
    schema: { type: "string", pattern: UUID.source },
  },
  update_id: {
    description: "An update id: the 26-character id start-update answered",
    schema: { type: "string", minLength: 26, maxLength: 26 },
  },
  flow_name: {
    description: "A flow of the pipeline, by its name",
    schema: { type: "string", pattern: "^[a-z_][a-z0-9_]*$", maxLength: 128 },
  },
  branch_name: {
    description: "A branch of the pipeline, by the name it was made with",
    schema: { type: "string", pattern: BRANCH_NAME.source },
  },
  statement_id: {
    description: "A SQL statement id: the UUID execute-statement answered",
    schema: { type: "string", pattern: UUID.source },
  },
  chunk_index: {
    description: "A result chunk's index (Ebb answers every result in one chunk, index 0)",
    schema: { type: "string", pattern: "^[0-9]{1,9}$" },
  },
  full_name: {
    description: "A table: catalog.schema.table",
    schema: {
      type: "string",
      pattern: "^[A-Za-z_][A-Za-z0-9_]*\\.[A-Za-z_][A-Za-z0-9_]*\\.[A-Za-z_][A-Za-z0-9_]*$",
    },
  },
};

export interface TableName {
  readonly catalog: string;
  readonly schema: string;
  readonly table: string;
}

export function pipelineIdParam(value: string | undefined): string {
  if (value === undefined || !UUID.test(value)) {
    throw new InvalidParameterError(
      `${JSON.stringify(value ?? "")} is not a pipeline id (a UUID such as the one create answered)`,
    );
  }
  return value;
}

export function flowNameParam(value: string | undefined): string {
  if (value === undefined || !isIdentifier(value)) {
    throw new InvalidParameterError(
      `${JSON.stringify(value ?? "")} is not a flow name (lower-case letters, digits and _, as in the definition)`,
    );
  }
  return value;
}

export function updateIdParam(value: string | undefined): string {
  if (value === undefined || !isTimeOrderedId(value)) {
    throw new InvalidParameterError(
      `${JSON.stringify(value ?? "")} is not an update id (26 characters, as start-update answered)`,
    );
  }
  return value;
}

export function statementIdParam(value: string | undefined): string {
  if (value === undefined || !UUID.test(value)) {
    throw new InvalidParameterError(
      `${JSON.stringify(value ?? "")} is not a statement id (a UUID such as the one execute-statement answered)`,
    );
  }
  return value;
}

export function chunkIndexParam(value: string | undefined): number {
  if (value === undefined || !/^[0-9]{1,9}$/.test(value)) {
    throw new InvalidParameterError(
      `${JSON.stringify(value ?? "")} is not a chunk index (a number from 0, as in the manifest's chunks)`,
    );
  }
  return Number(value);
}

/** `catalog.schema.table` (case-insensitive) → its lower-case parts. */
export function tableNameParam(value: string | undefined): TableName {
  const parts = (value ?? "").toLowerCase().split(".");
  if (parts.length !== 3 || !parts.every(isIdentifier)) {
    throw new InvalidParameterError(
      `${JSON.stringify(value ?? "")} is not a table name: use catalog.schema.table, each part lower-case letters, digits and _`,
    );
  }
  const [catalog, schema, table] = parts as [string, string, string];
  return { catalog, schema, table };
}
