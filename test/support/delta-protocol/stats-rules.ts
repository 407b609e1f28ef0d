import { isObject, NumberText, parseExactJson, type ExactValue } from "./exact-json.ts";
import type { SchemaField } from "./schema-fields.ts";
import { boundProblem, compareBounds, type SchemaType } from "./typed-values.ts";

/**
 * The `stats` JSON of an `add` or `remove` (PROTOCOL.md "Per-file Statistics"): `numRecords` a
 * non-negative whole number; `minValues`/`maxValues` mirror the schema with each bound a value of its
 * column's type and in its range, min <= max; `nullCount` mirrors it with counts in 0..numRecords;
 * `tightBounds` a boolean. Returns each problem in words.
 */
export function statsProblems(text: string, fields: readonly SchemaField[]): string[] {
  let stats: ExactValue;
  try {
    stats = parseExactJson(text);
  } catch (error) {
    return [`stats is not JSON: ${(error as Error).message}`];
  }
  if (!isObject(stats)) return ["stats is not a JSON object"];
  const problems: string[] = [];
  const numRecords = stats.numRecords;
  let records: bigint | undefined;
  if (numRecords === undefined) problems.push("stats has no numRecords");
  else if (!(numRecords instanceof NumberText) || !/^\d+$/.test(numRecords.text)) {
    problems.push(`numRecords ${JSON.stringify(numRecords)} is not a non-negative whole number`);
  } else records = BigInt(numRecords.text);
  if (stats.tightBounds !== undefined && typeof stats.tightBounds !== "boolean") {
    problems.push("tightBounds is not a boolean");
  }
  for (const key of Object.keys(stats)) {
    if (!["numRecords", "minValues", "maxValues", "nullCount", "tightBounds"].includes(key)) {
      problems.push(`stats has an unknown field ${key}`);
    }
  }
  const bounds = (which: "minValues" | "maxValues") => {
    const value = stats[which];
    if (value === undefined) return;
    if (!isObject(value)) return void problems.push(`${which} is not an object`);
    walkBounds(
      value,
      fields,
      which,
      (path, type, bound) => {
        const problem = boundProblem(type, bound);
        if (problem) problems.push(`${which}.${path}: ${problem}`);
      },
      problems,
    );
  };
  bounds("minValues");
  bounds("maxValues");
  if (isObject(stats.minValues) && isObject(stats.maxValues)) {
    const max = stats.maxValues;
    walkBounds(
      stats.minValues,
      fields,
      "minValues",
      (path, type, low) => {
        const high = path
          .split(".")
          .reduce<ExactValue | undefined>((node, key) => (isObject(node) ? node[key] : undefined), max);
        if (high === undefined || high === null || low === null) return;
        const order = compareBounds(type, low, high);
        if (order !== undefined && order > 0) problems.push(`minValues.${path} is above maxValues.${path}`);
      },
      [],
    );
  }
  if (stats.nullCount !== undefined) {
    if (!isObject(stats.nullCount)) problems.push("nullCount is not an object");
    else walkCounts(stats.nullCount, fields, "", records, problems);
  }
  return problems;
}

function walkBounds(
  node: Record<string, ExactValue>,
  fields: readonly SchemaField[],
  where: string,
  visit: (path: string, type: SchemaType, value: ExactValue) => void,
  problems: string[],
  parent = "",
): void {
  for (const [name, value] of Object.entries(node)) {
    const field = fields.find((f) => f.name === name);
    const path = parent === "" ? name : `${parent}.${name}`;
    if (!field) {
      problems.push(`${where}.${path}: no such column`);
      continue;
    }
    if (value === null) continue;
    if (typeof field.type === "object" && field.type.type === "struct") {
      if (!isObject(value)) problems.push(`${where}.${path}: a struct's bounds must be an object`);
      else walkBounds(value, field.type.fields as SchemaField[], where, visit, problems, path);
    } else visit(path, field.type, value);
  }
}

function walkCounts(
  node: Record<string, ExactValue>,
  fields: readonly SchemaField[],
  parent: string,
  records: bigint | undefined,
  problems: string[],
): void {
  for (const [name, value] of Object.entries(node)) {
    const field = fields.find((f) => f.name === name);
    const path = parent === "" ? name : `${parent}.${name}`;
    if (!field) {
      problems.push(`nullCount.${path}: no such column`);
      continue;
    }
    if (typeof field.type === "object" && field.type.type === "struct" && isObject(value)) {
      walkCounts(value, field.type.fields as SchemaField[], path, records, problems);
    } else if (!(value instanceof NumberText) || !/^\d+$/.test(value.text)) {
      problems.push(`nullCount.${path}: ${JSON.stringify(value)} is not a count`);
    } else if (records !== undefined && BigInt(value.text) > records) {
      problems.push(`nullCount.${path}: ${value.text} is more than numRecords ${records}`);
    }
  }
}
