import { beginTransaction, prepareStagedWrite, type WriteOptions } from "../../delta/index.ts";
import {
  commitOverwrite,
  openOrCreateWith,
  type SinkSession,
  type SinkTarget,
  type StagedFiles,
} from "../table-sink.ts";

/**
 * Overwrites a table with data files another engine wrote into its folder (a Spark job's recompute
 * of a materialized view): the same commit as table-sink.ts `overwriteTable` (every live file
 * removed, the files added, the schema replaced when it differs, in one WRITE (Overwrite)), only the
 * files were written elsewhere. A table that does not exist yet is created with the files' schema.
 */
export async function overwriteWithStagedFiles(
  target: SinkTarget,
  session: SinkSession,
  staged: StagedFiles,
  options: Pick<WriteOptions, "timestampFloor" | "extraParameters" | "beforeCommit"> = {},
): Promise<{ version: number; timestamp: number; rows: number }> {
  const snapshot = await openOrCreateWith(target, session, async () => staged.schema);
  beginTransaction(snapshot, undefined);
  const prepared = await prepareStagedWrite(snapshot, "overwrite", session.clock, staged.schema, async () => [
    ...staged.adds,
  ]);
  return commitOverwrite(target, session, snapshot, prepared, options);
}
