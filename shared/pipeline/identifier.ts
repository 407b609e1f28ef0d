import { z } from "zod";

/**
 * Names that reach S3 keys and DynamoDB keys (catalog, schema, dataset, flow): lower-case letters,
 * digits and `_`, not starting with a digit (architecture.md "Storage"). No `/`, no `.`, so a name can
 * never escape its prefix.
 */
export const IDENTIFIER_PATTERN = /^[a-z_][a-z0-9_]*$/;

/** Long enough for any sensible name, short enough to keep keys well under DynamoDB's limits. */
export const MAX_IDENTIFIER_LENGTH = 128;

export function isIdentifier(value: string): boolean {
  return value.length <= MAX_IDENTIFIER_LENGTH && IDENTIFIER_PATTERN.test(value);
}

/** A zod schema for an identifier whose error message says what a valid one looks like. */
export function identifierSchema(what: string) {
  return z.string().refine(isIdentifier, {
    error: (issue) =>
      `${what} ${JSON.stringify(issue.input)} is not allowed: use lower-case letters, digits and _ (not starting with a digit), at most ${MAX_IDENTIFIER_LENGTH} characters, e.g. "daily_orders"`,
  });
}

/** A column of the data (partition columns, declared schemas): letters of either case, digits, `_`. */
export const COLUMN_NAME_PATTERN = /^[A-Za-z_][A-Za-z0-9_]*$/;

export function columnNameSchema() {
  return z.string().regex(COLUMN_NAME_PATTERN, {
    error: (issue) =>
      `column name ${JSON.stringify(issue.input)} is not allowed: use letters, digits and _ (not starting with a digit)`,
  });
}
