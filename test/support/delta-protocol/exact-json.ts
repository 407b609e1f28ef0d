/**
 * JSON parsed with its numbers kept as written, so a `long` bound past 2^53 or a decimal of 38 digits
 * is checked digit for digit rather than after rounding through a double.
 */

/** A JSON number literal, as it appears in the text. */
export class NumberText {
  constructor(readonly text: string) {}
  get isInteger(): boolean {
    return /^-?\d+$/.test(this.text);
  }
}

export type ExactValue = null | boolean | string | NumberText | ExactValue[] | { [key: string]: ExactValue };

/** Parses `text`; throws `SyntaxError` on anything that is not one JSON value. */
export function parseExactJson(text: string): ExactValue {
  let at = 0;
  const fail = (what: string): never => {
    throw new SyntaxError(`${what} at offset ${at}`);
  };
  const space = () => {
    while (at < text.length && " \t\n\r".includes(text[at]!)) at++;
  };
  const value = (): ExactValue => {
    space();
    const c = text[at];
    if (c === "{") {
      at++;
      const out: Record<string, ExactValue> = {};
      space();
      if (text[at] === "}") return (at++, out);
      for (;;) {
        space();
        if (text[at] !== '"') fail("expected a key");
        const key = string();
        space();
        if (text[at++] !== ":") fail("expected ':'");
        out[key] = value();
        space();
        const next = text[at++];
        if (next === "}") return out;
        if (next !== ",") fail("expected ',' or '}'");
      }
    }
    if (c === "[") {
      at++;
      const out: ExactValue[] = [];
      space();
      if (text[at] === "]") return (at++, out);
      for (;;) {
        out.push(value());
        space();
        const next = text[at++];
        if (next === "]") return out;
        if (next !== ",") fail("expected ',' or ']'");
      }
    }
    if (c === '"') return string();
    const literal = /^(?:true|false|null|-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][-+]?\d+)?)/.exec(
      text.slice(at, at + 400),
    );
    if (!literal) return fail("unexpected character");
    at += literal[0].length;
    if (literal[0] === "true") return true;
    if (literal[0] === "false") return false;
    if (literal[0] === "null") return null;
    return new NumberText(literal[0]);
  };
  const string = (): string => {
    const start = at++;
    while (at < text.length && text[at] !== '"') at += text[at] === "\\" ? 2 : 1;
    if (at >= text.length) return fail("unterminated string");
    at++;
    return JSON.parse(text.slice(start, at)) as string;
  };

  const result = value();
  space();
  if (at !== text.length) fail("trailing text");
  return result;
}

export function isObject(value: unknown): value is Record<string, ExactValue> {
  return (
    typeof value === "object" && value !== null && !Array.isArray(value) && !(value instanceof NumberText)
  );
}
