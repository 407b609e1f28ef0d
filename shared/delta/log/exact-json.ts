/**
 * JSON whose numbers keep their exact text. `JSON.parse` turns every number into a double, which
 * rounds a `long` above 2^53 and a decimal of more than 15 significant digits; per-file statistics
 * (PROTOCOL.md "Per-file Statistics") hold such numbers as bounds, and a rounded bound can land on the
 * wrong side of the value it bounds. Numbers are read as `JsonNumber` (their literal text) and
 * written back from it, or from a `bigint`, digit for digit.
 */

/** A JSON number as written: its literal text, e.g. `1717171717123456789` or `-0.50`. */
export class JsonNumber {
  constructor(readonly text: string) {}

  toNumber(): number {
    return Number(this.text);
  }
}

export type ExactJson =
  null | boolean | string | JsonNumber | readonly ExactJson[] | { readonly [key: string]: ExactJson };

/** What `stringifyExact` accepts: plain JSON values, plus `JsonNumber` and `bigint`. */
export type ExactJsonInput =
  | null
  | undefined
  | boolean
  | string
  | number
  | bigint
  | JsonNumber
  | readonly ExactJsonInput[]
  | { readonly [key: string]: ExactJsonInput };

const NUMBER = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;
// eslint-disable-next-line no-control-regex -- JSON strings may not hold raw control characters
const STRING = /"(?:[^"\\\u0000-\u001f]|\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4}))*"/y;
const WHITESPACE = /[ \t\n\r]*/y;

/** Parses `text` as JSON, every number as a `JsonNumber`. Throws `SyntaxError` on malformed input. */
export function parseExact(text: string): ExactJson {
  let at = 0;
  const fail = (): never => {
    throw new SyntaxError(`malformed JSON at position ${at}`);
  };
  const skip = () => {
    WHITESPACE.lastIndex = at;
    WHITESPACE.exec(text);
    at = WHITESPACE.lastIndex;
  };
  const match = (pattern: RegExp): string | undefined => {
    pattern.lastIndex = at;
    const found = pattern.exec(text)?.[0];
    if (found !== undefined) at += found.length;
    return found;
  };
  const literal = (word: string) => {
    if (!text.startsWith(word, at)) fail();
    at += word.length;
  };
  const value = (): ExactJson => {
    skip();
    const c = text[at];
    if (c === "{") {
      at++;
      const object: Record<string, ExactJson> = {};
      skip();
      if (text[at] === "}") return (at++, object);
      for (;;) {
        skip();
        const key = match(STRING) ?? fail();
        skip();
        literal(":");
        Object.defineProperty(object, JSON.parse(key) as string, {
          value: value(),
          enumerable: true,
          writable: true,
          configurable: true,
        });
        skip();
        if (text[at] === ",") at++;
        else return (literal("}"), object);
      }
    }
    if (c === "[") {
      at++;
      const array: ExactJson[] = [];
      skip();
      if (text[at] === "]") return (at++, array);
      for (;;) {
        array.push(value());
        skip();
        if (text[at] === ",") at++;
        else return (literal("]"), array);
      }
    }
    if (c === '"') return JSON.parse(match(STRING) ?? fail()) as string;
    if (c === "t") return (literal("true"), true);
    if (c === "f") return (literal("false"), false);
    if (c === "n") return (literal("null"), null);
    return new JsonNumber(match(NUMBER) ?? fail());
  };
  const result = value();
  skip();
  if (at !== text.length) fail();
  return result;
}

/** JSON text of `value`; a `JsonNumber` or `bigint` is written as its exact digits. */
export function stringifyExact(value: ExactJsonInput): string {
  if (value instanceof JsonNumber) return value.text;
  if (typeof value === "bigint") return value.toString();
  if (Array.isArray(value)) return `[${value.map((item) => stringifyExact(item ?? null)).join(",")}]`;
  if (value !== null && typeof value === "object") {
    const entries = Object.entries(value as Record<string, ExactJsonInput>).filter(
      ([, item]) => item !== undefined,
    );
    return `{${entries.map(([key, item]) => `${JSON.stringify(key)}:${stringifyExact(item)}`).join(",")}}`;
  }
  return JSON.stringify(value ?? null);
}

/** `value` with every `JsonNumber` as a plain number, for fields that are always small. */
export function toPlainJson(value: ExactJson): unknown {
  if (value instanceof JsonNumber) return value.toNumber();
  if (Array.isArray(value)) return value.map(toPlainJson);
  if (value !== null && typeof value === "object") {
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, toPlainJson(item)]));
  }
  return value;
}
