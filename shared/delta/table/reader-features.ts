import type { Metadata, Protocol } from "../log/actions.ts";
import { UnsupportedFeatureError } from "../errors.ts";

/**
 * What this reader implements (PROTOCOL.md "Reader Version Requirements", "Table Features"):
 * reader version 1; version 2 only while column mapping is off; version 3 with the reader features
 * listed here. Deletion vectors, column mapping, v2 checkpoints, type widening, variants and
 * catalog-managed tables are refused by name rather than read wrongly.
 */
export const SUPPORTED_READER_FEATURES: ReadonlySet<string> = new Set([
  // TIMESTAMP_NTZ columns read as DuckDB TIMESTAMP (PROTOCOL.md "Timestamp without timezone").
  "timestampNtz",
  // Only constrains VACUUM (PROTOCOL.md "VACUUM Protocol Check"); nothing to do on read.
  "vacuumProtocolCheck",
]);

export const MAX_READER_VERSION = 3;

/** Throws `UnsupportedFeatureError` naming the first feature the table needs and we lack. */
export function assertReadable(protocol: Protocol, metadata?: Metadata): void {
  const version = protocol.minReaderVersion;
  if (!Number.isInteger(version) || version < 1 || version > MAX_READER_VERSION) {
    throw new UnsupportedFeatureError(
      `readerVersion ${version}`,
      `this reader implements reader versions 1 to ${MAX_READER_VERSION}`,
    );
  }
  if (version === 2) {
    const mode = metadata?.configuration["delta.columnMapping.mode"] ?? "none";
    if (mode !== "none") {
      throw new UnsupportedFeatureError("columnMapping", `the table maps columns by ${mode}`);
    }
  }
  if (version === 3) {
    for (const feature of protocol.readerFeatures ?? []) {
      if (!SUPPORTED_READER_FEATURES.has(feature)) {
        throw new UnsupportedFeatureError(feature, "the table requires this reader feature");
      }
    }
  }
}
