import { InvalidKeyError } from "./errors.ts";

/** Refuses keys that could escape their prefix: empty, absolute, backslashes, `.`/`..` segments. */
export function assertValidKey(key: string): void {
  if (key.length === 0) throw new InvalidKeyError(key, "empty");
  if (key.startsWith("/")) throw new InvalidKeyError(key, "absolute");
  if (key.includes("\\")) throw new InvalidKeyError(key, "backslash");
  if (key.includes("\0")) throw new InvalidKeyError(key, "NUL byte");
  for (const segment of key.split("/")) {
    if (segment === "." || segment === "..") throw new InvalidKeyError(key, "'.' or '..' segment");
  }
}

/** A prefix is a key ending in `/`, or empty for the root. */
export function assertValidPrefix(prefix: string): void {
  if (prefix === "") return;
  if (!prefix.endsWith("/")) throw new InvalidKeyError(prefix, "a prefix must end with '/'");
  assertValidKey(prefix.slice(0, -1));
}

/**
 * Compares keys in UTF-8 byte order, the order S3 lists in. UTF-8 byte order is code point order,
 * which UTF-16 code units share below the surrogates (U+D800): only a first difference at or above
 * them needs the bytes.
 */
export function compareKeys(a: string, b: string): number {
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
