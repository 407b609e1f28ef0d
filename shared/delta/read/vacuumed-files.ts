import { DataFilesVacuumedError } from "../errors.ts";
import { TABLE_PROPERTY } from "../table/table-properties.ts";
import type { Snapshot } from "./snapshot.ts";

/**
 * What a data file the log names but the store lacks means to a reader: VACUUM removed it (Ebb
 * writes a file before the commit that adds it, and deletes one only through VACUUM). `files[i]` is
 * the file behind index `i` of the copy, with the version whose rows need it; `snapshot` is the
 * version whose properties say the retention.
 */
export function vacuumedFilesError(
  read: "snapshot" | "changes",
  snapshot: Snapshot,
  files: readonly { readonly path: string; readonly version: number }[],
): (indexes: readonly number[]) => DataFilesVacuumedError {
  return (indexes) => {
    const gone = indexes.map((i) => files[i]!);
    const versions = [...new Set(gone.map((file) => file.version))].sort((a, b) => a - b);
    return new DataFilesVacuumedError(read, versions, gone[0]!.path, deletedFileRetention(snapshot));
  };
}

/** The table's `delta.deletedFileRetentionDuration` as set, or Delta's default: how long VACUUM keeps a file. */
export function deletedFileRetention(snapshot: Snapshot): string {
  return snapshot.metadata.configuration[TABLE_PROPERTY.deletedFileRetentionDuration] ?? "interval 1 week";
}
