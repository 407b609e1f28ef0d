import { parseDocument } from "yaml";
import { DefinitionError } from "./errors.ts";
import { definitionErrorMap, namingFlowOptions, toDefinitionIssues } from "./definition-messages.ts";
import { pipelineDefinitionSchema, type PipelineDefinition } from "./definition-schema.ts";

/**
 * Reading a definition: text (YAML, or JSON, which is YAML) into a plain value, then the value into a
 * typed `PipelineDefinition`. Every problem is a `DefinitionError`; nothing is silently dropped
 * (unknown fields, duplicate keys).
 */

/** Parses YAML or JSON text into a plain value; syntax errors name the line and column. */
export function readDefinitionText(text: string): unknown {
  // JSON is a subset of YAML 1.2, so one parser covers both and reports positions the same way.
  // Duplicate keys are errors (uniqueKeys): the second `sql:` must not silently win.
  const document = parseDocument(text, { uniqueKeys: true, prettyErrors: true });
  const problems = [...document.errors, ...document.warnings];
  if (problems.length > 0) {
    throw new DefinitionError(
      problems.map((problem) => {
        const position = problem.linePos?.[0];
        const where = position ? `line ${position.line}, column ${position.col}` : "";
        return { path: where, message: `not valid YAML or JSON: ${firstLine(problem.message)}` };
      }),
    );
  }
  return document.toJS({ maxAliasCount: 100 });
}

/** Checks a plain value against the definition schema. */
export function parseDefinition(input: unknown): PipelineDefinition {
  const result = pipelineDefinitionSchema.safeParse(input, { error: definitionErrorMap });
  if (!result.success)
    throw new DefinitionError(toDefinitionIssues(namingFlowOptions(result.error.issues, input)));
  return result.data;
}

/** Text straight to a typed definition. */
export function parseDefinitionText(text: string): PipelineDefinition {
  return parseDefinition(readDefinitionText(text));
}

function firstLine(message: string): string {
  return message.split("\n", 1)[0] ?? message;
}
