import zlib from "node:zlib";
import type { Compressors } from "hyparquet";
import { UnsupportedFeatureError } from "../errors.ts";

/**
 * The page codecs a checkpoint may be compressed with, beyond the SNAPPY and UNCOMPRESSED the
 * Parquet reader decodes itself (Spark and Ebb write SNAPPY, delta-rs SNAPPY or none): GZIP and
 * BROTLI from Node's zlib, ZSTD from Node's zlib where it has it (Node.js 22.15 and later, as the
 * Lambda runtime).
 */
const zstd = (zlib as { zstdDecompressSync?: (input: Uint8Array) => Buffer }).zstdDecompressSync;

export const CHECKPOINT_COMPRESSORS: Compressors = {
  GZIP: (input) => zlib.gunzipSync(input),
  BROTLI: (input) => zlib.brotliDecompressSync(input),
  ...(zstd ? { ZSTD: (input: Uint8Array) => zstd(input) } : {}),
};

const DECODED: ReadonlySet<string> = new Set([
  "UNCOMPRESSED",
  "SNAPPY",
  ...Object.keys(CHECKPOINT_COMPRESSORS),
]);

/** Whether this process decompresses pages of `codec`. */
export function isDecodableCodec(codec: string): boolean {
  return DECODED.has(codec);
}

/** Throws `UnsupportedFeatureError` naming a codec of `codecs` this process cannot decompress. */
export function assertDecodableCodecs(codecs: Iterable<string>, file: string): void {
  for (const codec of codecs) {
    if (DECODED.has(codec)) continue;
    const way =
      codec === "ZSTD"
        ? `this Node.js (${process.version}) has no ZSTD: run on Node.js 22.15 or later`
        : "rewrite the checkpoint with SNAPPY, GZIP, BROTLI or ZSTD";
    throw new UnsupportedFeatureError(
      `checkpoint compression ${codec}`,
      `${file} is compressed with ${codec}; ${way}`,
    );
  }
}
