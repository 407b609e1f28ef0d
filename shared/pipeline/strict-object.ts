import { z } from "zod";

/**
 * A zod object that refuses unknown fields and, when it does, names the fields that are allowed: a
 * typo (`sq:` for `sql:`) must never be silently ignored (api.md: unknown fields are refused).
 */
export function strictObject<Shape extends z.ZodRawShape>(
  shape: Shape,
  /** Where a field that belongs elsewhere goes, by its name: said instead of the allowed list. */
  hints: Readonly<Record<string, string>> = {},
) {
  const names = Object.keys(shape);
  const allowed = names.length === 0 ? "none are allowed here" : `allowed here: ${names.join(", ")}`;
  return z.strictObject(shape, {
    error: (issue) => {
      if (issue.code !== "unrecognized_keys") return undefined;
      const hint = issue.keys.map((key) => hints[key]).find((text) => text !== undefined);
      return `unknown field${issue.keys.length === 1 ? "" : "s"} ${issue.keys.map((k) => `"${k}"`).join(", ")}; ${hint ?? allowed}`;
    },
  });
}

/** An enum that accepts any letter case (`drop`, `Drop`) and normalizes to the canonical values. */
export function caseInsensitiveEnum<const Values extends readonly [string, ...string[]]>(
  values: Values,
  normalize: (value: string) => string,
) {
  return z.preprocess((value) => (typeof value === "string" ? normalize(value) : value), z.enum(values));
}
