import type { ByteRange } from "./object-store.ts";

/** The bytes of `body` that `range` selects, clamped to its length (HTTP Range semantics). */
export function sliceRange(body: Uint8Array, range: ByteRange): Uint8Array {
  if ("suffix" in range) return body.slice(Math.max(0, body.byteLength - range.suffix));
  return body.slice(range.start, Math.min(body.byteLength, range.end + 1));
}

/** The HTTP `Range` header value for `range`. */
export function rangeHeader(range: ByteRange): string {
  return "suffix" in range ? `bytes=-${range.suffix}` : `bytes=${range.start}-${range.end}`;
}
