import type { Action } from "../log/actions.ts";
import { standardRequirements } from "../commit/commit-requirements.ts";
import { writeDataFiles } from "../write/data-file-writer.ts";
import { AppendOnlyTableError } from "../errors.ts";
import { removeFor } from "../commit/file-actions.ts";
import { layoutOf, type OperationContext, type PreparedCommit } from "../commit/operation-context.ts";
import { stageRows, type RowSource } from "../write/row-source.ts";
import type { Snapshot } from "../read/snapshot.ts";
import { tableProperties } from "../table/table-properties.ts";

/**
 * WRITE (Delta's `df.write.format("delta").mode(...)`): `append` adds the rows as new files (a blind
 * append); `overwrite` also removes every live file, in the same commit.
 */
export type WriteMode = "append" | "overwrite";

export async function prepareWrite(
  context: OperationContext,
  snapshot: Snapshot,
  source: RowSource,
  mode: WriteMode,
): Promise<PreparedCommit> {
  if (mode === "overwrite" && tableProperties(snapshot.metadata).appendOnly) {
    throw new AppendOnlyTableError("WRITE (Overwrite)");
  }
  const layout = layoutOf(snapshot);
  const staged = await stageRows(context.duck, context.scratch, layout.schema, source);
  let adds;
  try {
    adds = await writeDataFiles(context, layout, staged.sql);
  } finally {
    await staged.dispose();
  }
  const now = context.clock();
  const removed = mode === "overwrite" ? [...snapshot.files] : [];
  const actions: Action[] = [
    ...removed.map(([, file]) => ({ remove: removeFor(file, now) })),
    ...adds.map((add) => ({ add })),
  ];
  const rows = adds.reduce(
    (sum, add) => sum + (JSON.parse(add.stats!) as { numRecords: number }).numRecords,
    0,
  );
  return {
    actions,
    operation: {
      operation: "WRITE",
      operationParameters: {
        mode: mode === "append" ? "Append" : "Overwrite",
        partitionBy: JSON.stringify(layout.partitionColumns),
      },
      operationMetrics: {
        numFiles: adds.length,
        numOutputRows: rows,
        numOutputBytes: adds.reduce((sum, add) => sum + add.size, 0),
        ...(mode === "overwrite" ? { numRemovedFiles: removed.length } : {}),
      },
      isBlindAppend: mode === "append",
    },
    requirements: standardRequirements({ removedFiles: removed.map(([key]) => key) }),
  };
}
