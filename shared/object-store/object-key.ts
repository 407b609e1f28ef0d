import { InvalidKeyError } from "./errors.ts";

/** Refuses keys that could escape their prefix: empty, absolute, backslashes, `.`/`..` segments. */
export function assertValidKey(key: string): void {
  if (key.length === 0) throw new InvalidKeyError(key, "empty");
  if (key.startsWith("/")) throw new InvalidKeyError(key, "absolute");
  if (key.includes("\\")) throw new InvalidKeyError(key, "backslash");
  if (key.includes("\0")) throw new InvalidKeyError(key, "NUL byte");
  if (DOT_SEGMENT.test(key)) throw new InvalidKeyError(key, "'.' or '..' segment");
}

/** A `.` or `..` segment (one test where a split allocated every segment of every key checked). */
const DOT_SEGMENT = /(?:^|\/)\.\.?(?:\/|$)/;

/** A prefix is a key ending in `/`, or empty for the root. */
export function assertValidPrefix(prefix: string): void {
  if (prefix === "") return;
  if (!prefix.endsWith("/")) throw new InvalidKeyError(prefix, "a prefix must end with '/'");
  assertValidKey(prefix.slice(0, -1));
}

/**
 * Compares keys in UTF-8 byte order, the order S3 lists in. UTF-8 byte order is code point order,
 * which UTF-16 code units share below the surrogates (U+D800): only a first difference where both
 * keys hold a unit at or above them needs the bytes. Any other pair takes the engine's own string
 * comparison (one call where a loop over the characters of `_delta_log/000…` names, before the JIT
 * had compiled it, was most of the listing of a snapshot load).
 */
export function compareKeys(a: string, b: string): number {
  if (a === b) return 0;
  if (!AT_OR_ABOVE_SURROGATES.test(a) || !AT_OR_ABOVE_SURROGATES.test(b)) return a < b ? -1 : 1;
  const length = Math.min(a.length, b.length);
  for (let i = 0; i < length; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x === y) continue;
    if (x < 0xd800 && y < 0xd800) return x - y;
    return Buffer.compare(Buffer.from(a, "utf8"), Buffer.from(b, "utf8"));
  }
  return a.length - b.length;
}

const AT_OR_ABOVE_SURROGATES = /[\ud800-\uffff]/;
