import type { z } from "zod";
import type { DefinitionIssue } from "./errors.ts";

/**
 * Turns zod's issues into messages a data engineer understands: where the field is, written the way
 * it appears in the YAML (`datasets[1].flows[0].source.type`), and what is allowed there. Schemas set
 * their own messages where they know better (identifiers, unknown fields); this covers the rest.
 */

/** The parse-time error map: the wording of zod's built-in checks. */
export const definitionErrorMap: z.core.$ZodErrorMap = (issue) => {
  switch (issue.code) {
    case "invalid_type":
      return issue.input === undefined
        ? `is required (${article(issue.expected)})`
        : `must be ${article(issue.expected)}, not ${describeValue(issue.input)}`;
    case "invalid_value":
      return `must be one of ${issue.values.map((v) => JSON.stringify(v)).join(", ")}, not ${describeValue(issue.input)}`;
    case "invalid_union": {
      if (!("discriminator" in issue) || issue.discriminator === undefined) return undefined;
      const options = (issue as { options?: unknown[] }).options ?? [];
      const allowed = options.map((v) => JSON.stringify(v)).join(", ");
      // The issue's input is the whole object; the user wrote (or forgot) its discriminator field.
      const written = (issue.input as Record<string, unknown> | undefined)?.[issue.discriminator];
      return written === undefined
        ? `is required: one of ${allowed}`
        : `must be one of ${allowed}, not ${describeValue(written)}`;
    }
    case "too_small":
      if (issue.origin === "array")
        return `needs at least ${String(issue.minimum)} item${issue.minimum === 1 ? "" : "s"}`;
      if (issue.origin === "string") return "must not be empty";
      return `must be at least ${String(issue.minimum)}`;
    case "too_big":
      return `must be at most ${String(issue.maximum)}${issue.origin === "string" ? " characters" : ""}`;
    case "invalid_key":
      return issue.issues[0]?.message ?? `key ${JSON.stringify(issue.input)} is not allowed`;
    default:
      return undefined;
  }
};

/**
 * A flow option's value that its schema refused, named by the flow and the option (`flow "ingest":
 * use_incremental_listing must be …`), as the flow's own rules name them. Messages a schema wrote
 * itself (custom issues) already say what they are about.
 */
export function namingFlowOptions(issues: readonly z.core.$ZodIssue[], input: unknown): z.core.$ZodIssue[] {
  return issues.map((issue) => {
    const [datasets, d, flows, f, options, option] = issue.path;
    if (datasets !== "datasets" || flows !== "flows" || options !== "options" || issue.code === "custom")
      return issue;
    const flow = (input as { datasets?: { flows?: { name?: unknown }[] }[] } | undefined)?.datasets?.[
      d as number
    ]?.flows?.[f as number];
    if (typeof flow?.name !== "string" || typeof option !== "string") return issue;
    return { ...issue, message: `flow ${JSON.stringify(flow.name)}: ${option} ${issue.message}` };
  });
}

/** zod issues as `{path, message}` pairs. */
export function toDefinitionIssues(issues: readonly z.core.$ZodIssue[]): DefinitionIssue[] {
  return issues.map((issue) => {
    const code = issue.code === "custom" ? (issue.params as { code?: unknown } | undefined)?.code : undefined;
    return {
      path: formatPath(issue.path),
      message: issue.message,
      ...(typeof code === "string" ? { code } : {}),
    };
  });
}

/** `["datasets", 1, "flows", 0, "sql"]` → `datasets[1].flows[0].sql`; odd keys are quoted. */
export function formatPath(path: readonly PropertyKey[]): string {
  let text = "";
  for (const key of path) {
    if (typeof key === "number") text += `[${key}]`;
    else if (typeof key === "string" && /^[A-Za-z_][A-Za-z0-9_]*$/.test(key)) text += text ? `.${key}` : key;
    else text += `[${JSON.stringify(String(key))}]`;
  }
  return text;
}

function article(expected: string): string {
  const noun = expected === "record" ? "map of names to values" : expected === "array" ? "list" : expected;
  return `${/^[aeiou]/.test(noun) ? "an" : "a"} ${noun}`;
}

function describeValue(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "a list";
  if (typeof value === "object") return "a map";
  if (typeof value === "string") return JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value);
  return `${typeof value} ${String(value)}`;
}
