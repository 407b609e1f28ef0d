import { isObject, NumberText, type ExactValue } from "./exact-json.ts";

/**
 * What a value of each Delta type looks like where the log spells it out: a partition value (a
 * string, PROTOCOL.md "Partition Value Serialization") and a statistics bound (JSON, "Per-file
 * Statistics"). Each check returns a problem in words, or undefined when the value is right.
 */

/** A type as the schema JSON spells it (PROTOCOL.md "Schema Serialization Format"). */
export type SchemaType = string | { readonly type: string; readonly [key: string]: unknown };

const INTEGER_RANGES: Readonly<Record<string, readonly [bigint, bigint]>> = {
  byte: [-(2n ** 7n), 2n ** 7n - 1n],
  short: [-(2n ** 15n), 2n ** 15n - 1n],
  integer: [-(2n ** 31n), 2n ** 31n - 1n],
  long: [-(2n ** 63n), 2n ** 63n - 1n],
};

const DATE = /^\d{4}-\d{2}-\d{2}$/;
const TIME = String.raw`\d{2}:\d{2}:\d{2}(?:\.\d{1,9})?`;
/** Java's `Double.parseDouble` accepts these; `nan` and `inf` it refuses. */
const JAVA_DOUBLE = /^[-+]?(?:NaN|Infinity|(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)$/;

export function decimalShape(type: SchemaType): { precision: number; scale: number } | undefined {
  const match = typeof type === "string" ? /^decimal\((\d+),\s*(\d+)\)$/.exec(type) : null;
  return match ? { precision: Number(match[1]), scale: Number(match[2]) } : undefined;
}

/** Checks a non-null partition value string of `type`. */
export function partitionValueProblem(type: SchemaType, value: string): string | undefined {
  if (typeof type !== "string") return `a partition column cannot be of type ${JSON.stringify(type)}`;
  const range = INTEGER_RANGES[type];
  if (range) return integerProblem(value, range, type);
  const decimal = decimalShape(type);
  if (decimal) return decimalProblem(value, decimal);
  switch (type) {
    case "string":
    case "binary":
      return undefined;
    case "float":
    case "double":
      return JAVA_DOUBLE.test(value) ? undefined : `${JSON.stringify(value)} is not a ${type} Java can parse`;
    case "boolean":
      return value === "true" || value === "false"
        ? undefined
        : `${JSON.stringify(value)} is not "true" or "false"`;
    case "date":
      return DATE.test(value) && validDate(value)
        ? undefined
        : `${JSON.stringify(value)} is not {year}-{month}-{day}`;
    case "timestamp":
      return new RegExp(`^\\d{4}-\\d{2}-\\d{2}(?: ${TIME}|T${TIME}Z)$`).test(value)
        ? undefined
        : `${JSON.stringify(value)} is neither "yyyy-mm-dd hh:mm:ss[.ffffff]" nor ISO 8601 in UTC`;
    case "timestamp_ntz":
      return new RegExp(`^\\d{4}-\\d{2}-\\d{2} ${TIME}$`).test(value)
        ? undefined
        : `${JSON.stringify(value)} is not "yyyy-mm-dd hh:mm:ss[.ffffff]"`;
    default:
      return `a partition column cannot be of type ${type}`;
  }
}

/** Checks a min/max bound of a primitive column `type`. */
export function boundProblem(type: SchemaType, value: ExactValue): string | undefined {
  if (typeof type !== "string") return `a bound of a ${type.type} column must be an object of its fields`;
  const range = INTEGER_RANGES[type];
  if (range) {
    if (!(value instanceof NumberText)) return `${show(value)} is not a JSON number`;
    return integerProblem(value.text, range, type);
  }
  const decimal = decimalShape(type);
  if (decimal) {
    if (!(value instanceof NumberText)) return `${show(value)} is not a JSON number`;
    return decimalProblem(value.text, decimal);
  }
  switch (type) {
    case "float":
    case "double":
      return value instanceof NumberText || value === "NaN" || value === "Infinity" || value === "-Infinity"
        ? undefined
        : `${show(value)} is not a ${type}`;
    case "string":
      return typeof value === "string" ? undefined : `${show(value)} is not a string`;
    case "date":
      return typeof value === "string" && DATE.test(value) && validDate(value)
        ? undefined
        : `${show(value)} is not a date "yyyy-mm-dd"`;
    case "timestamp":
      return typeof value === "string" &&
        !Number.isNaN(Date.parse(value)) &&
        /(?:Z|[+-]\d{2}:\d{2})$/.test(value)
        ? undefined
        : `${show(value)} is not an ISO 8601 timestamp with a zone`;
    case "timestamp_ntz":
      return typeof value === "string" && new RegExp(`^\\d{4}-\\d{2}-\\d{2}T${TIME}$`).test(value)
        ? undefined
        : `${show(value)} is not an ISO 8601 timestamp without a zone`;
    default:
      // Spark writes no bounds for boolean, binary, void, arrays and maps.
      return `a ${type} column has no min/max statistics`;
  }
}

/** Orders two bounds of the same numeric type exactly; undefined for non-numbers. */
export function compareBounds(type: SchemaType, a: ExactValue, b: ExactValue): number | undefined {
  if (!(a instanceof NumberText) || !(b instanceof NumberText)) {
    if (typeof a === "string" && typeof b === "string" && (type === "date" || type === "string")) {
      // Delta's readers order strings by their UTF-8 bytes (code points), not JavaScript's UTF-16
      // units: the two disagree between U+E000-U+FFFF and the characters beyond U+FFFF.
      return Math.sign(Buffer.compare(Buffer.from(a, "utf8"), Buffer.from(b, "utf8")));
    }
    return undefined;
  }
  if (INTEGER_RANGES[typeof type === "string" ? type : ""] || decimalShape(type)) {
    const [x, y] = [scaled(a.text), scaled(b.text)];
    if (x && y) return x < y ? -1 : x > y ? 1 : 0;
  }
  return Math.sign(Number(a.text) - Number(b.text));
}

function integerProblem(
  text: string,
  [min, max]: readonly [bigint, bigint],
  type: string,
): string | undefined {
  if (!/^-?\d+$/.test(text)) return `${JSON.stringify(text)} is not a whole ${type}`;
  const n = BigInt(text);
  return n < min || n > max ? `${text} is outside the range of ${type}` : undefined;
}

function decimalProblem(text: string, { precision, scale }: { precision: number; scale: number }) {
  const match = /^-?(\d+)(?:\.(\d+))?$/.exec(text);
  if (!match) return `${JSON.stringify(text)} is not a plain decimal number`;
  const whole = match[1]!.replace(/^0+(?=\d)/, "");
  const fraction = (match[2] ?? "").replace(/0+$/, "");
  if (fraction.length > scale) return `${text} has more than ${scale} digits after the point`;
  if ((whole === "0" ? 0 : whole.length) > precision - scale)
    return `${text} does not fit decimal(${precision},${scale})`;
  return undefined;
}

/** A decimal literal as an exact scaled integer pair, for ordering (scale 18 is enough for both sides). */
function scaled(text: string): bigint | undefined {
  const match = /^(-?)(\d+)(?:\.(\d+))?$/.exec(text);
  if (!match) return undefined;
  const digits = BigInt(match[2]! + (match[3] ?? "").padEnd(38, "0").slice(0, 38));
  return match[1] ? -digits : digits;
}

function validDate(text: string): boolean {
  const date = new Date(`${text}T00:00:00Z`);
  return !Number.isNaN(date.getTime()) && date.toISOString().startsWith(text);
}

function show(value: ExactValue): string {
  if (value instanceof NumberText) return value.text;
  return isObject(value) || Array.isArray(value) ? "an object" : JSON.stringify(value);
}
