import type { z } from "zod";
import { definitionErrorMap, toDefinitionIssues } from "../pipeline/definition-messages.ts";
import { MalformedRequestError, RequestTooLargeError, UnsupportedMediaTypeError } from "./errors.ts";
import { InvalidParameterError } from "../errors/coded-error.ts";

/**
 * Reading a request (api.md): a body over 1 MiB is refused with 413, one that is not a JSON object
 * with `MALFORMED_REQUEST`, and one that does not fit the route's strict schema (an unknown field, a
 * wrong type) with `INVALID_PARAMETER_VALUE` naming the field — a typo never silently does nothing.
 */

export const MAX_BODY_BYTES = 1 << 20; // 1 MiB

/**
 * Media types a JSON body may come as: JSON itself, none, and curl's default for `-d`
 * (`application/x-www-form-urlencoded`), so the curl lines users paste keep working.
 */
const JSON_BODY_TYPES = ["application/json", "application/x-www-form-urlencoded"];

/** The body as a plain JSON value; an empty body is `{}` (a start-update may have none). */
export function readJsonBody(
  body: string | null | undefined,
  isBase64Encoded = false,
  contentType?: string,
): unknown {
  if (body === null || body === undefined) return {};
  const mediaType = contentType?.split(";")[0]?.trim().toLowerCase();
  if (mediaType && !JSON_BODY_TYPES.includes(mediaType) && !mediaType.endsWith("+json"))
    throw new UnsupportedMediaTypeError(mediaType);
  const bytes = isBase64Encoded ? Buffer.from(body, "base64") : Buffer.from(body, "utf8");
  if (bytes.length > MAX_BODY_BYTES) throw new RequestTooLargeError(bytes.length, MAX_BODY_BYTES);
  const text = bytes.toString("utf8");
  if (text.trim() === "") return {};
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new MalformedRequestError(
      `the request body is not valid JSON (${(error as Error).message}): send a JSON object, with Content-Type: application/json`,
    );
  }
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    throw new MalformedRequestError("the request body must be a JSON object ({...})");
  }
  return value;
}

/** Checks `input` against a strict schema; every problem is named with its field path. */
export function parseWith<Schema extends z.ZodType>(
  schema: Schema,
  input: unknown,
  where = "",
): z.infer<Schema> {
  const result = schema.safeParse(input, { error: definitionErrorMap });
  if (result.success) return result.data;
  const issues = toDefinitionIssues(result.error.issues).map((issue) => {
    const path = [where, issue.path].filter(Boolean).join(".");
    return path ? `${path}: ${issue.message}` : issue.message;
  });
  throw new InvalidParameterError(issues.join("; "), { data: { issues } });
}
