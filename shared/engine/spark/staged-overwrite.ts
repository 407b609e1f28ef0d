import { ScratchFolder } from "../../duck/scratch-folder.ts";
import {
  beginTransaction,
  commitTransaction,
  prepareStagedWrite,
  type WriteOptions,
} from "../../delta/index.ts";
import { openOrCreateWith, type SinkSession, type SinkTarget, type StagedFiles } from "../table-sink.ts";

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
  const commitScratch = await ScratchFolder.createIn(session.scratch.dir, "commit-");
  const outcome = await commitTransaction(
    target.store,
    {
      readSnapshot: snapshot,
      prepared,
      ...(options.timestampFloor !== undefined ? { timestampFloor: options.timestampFloor } : {}),
      ...(options.extraParameters ? { extraParameters: options.extraParameters } : {}),
      ...(options.beforeCommit ? { beforeCommit: options.beforeCommit } : {}),
    },
    { clock: session.clock, session: { ...session, scratch: commitScratch } },
  ).finally(() => commitScratch.dispose());
  if (outcome.status === "conflict") throw outcome.error;
  return {
    version: outcome.version,
    timestamp: outcome.timestamp,
    rows: Number(prepared.operation.operationMetrics?.["numOutputRows"] ?? 0),
  };
}
