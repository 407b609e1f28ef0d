import type { Action, AddFile, Metadata } from "../log/actions.ts";
import { parseSchema, type StructType } from "../table/schema.ts";
import { serializeSchema } from "../table/schema-serialization.ts";
import { standardRequirements } from "../commit/commit-requirements.ts";
import { writeDataFiles } from "../write/data-file-writer.ts";
import { AppendOnlyTableError } from "../errors.ts";
import { recordCount, removeFor } from "../commit/file-actions.ts";
import { layoutOf, type OperationContext, type PreparedCommit } from "../commit/operation-context.ts";
import { stageRows, type RowSource } from "../write/row-source.ts";
import type { Snapshot } from "../read/snapshot.ts";
import { tableProperties } from "../table/table-properties.ts";

/**
 * WRITE (Delta's `df.write.format("delta").mode(...)`): `append` adds the rows as new files (a blind
 * append); `overwrite` also removes every live file, in the same commit. An overwrite given a schema
 * (Delta's `overwriteSchema`) makes it the table's when its columns or types differ: a `metaData`
 * action in the same commit, so readers see the schema change at that version.
 */
export type WriteMode = "append" | "overwrite";

export async function prepareWrite(
  context: OperationContext,
  snapshot: Snapshot,
  source: RowSource,
  mode: WriteMode,
  overwriteSchema?: StructType,
): Promise<PreparedCommit> {
  return prepareStagedWrite(snapshot, mode, context.clock, overwriteSchema, async (layoutSnapshot) => {
    const layout = layoutOf(layoutSnapshot);
    const staged = await stageRows(context.duck, context.scratch, layout.schema, source);
    try {
      return await writeDataFiles(context, layout, staged.sql);
    } finally {
      await staged.dispose();
    }
  });
}

/**
 * The same WRITE over data files another engine wrote (a Spark job's, committed in place): `adds`
 * is given the snapshot as the commit will leave its metadata (its schema replaced, for an overwrite
 * given one) and answers the files' `add` actions.
 */
export async function prepareStagedWrite(
  snapshot: Snapshot,
  mode: WriteMode,
  clock: () => number,
  overwriteSchema: StructType | undefined,
  adds: (snapshot: Snapshot) => Promise<AddFile[]>,
): Promise<PreparedCommit> {
  if (mode === "overwrite" && tableProperties(snapshot.metadata).appendOnly) {
    throw new AppendOnlyTableError("WRITE (Overwrite)");
  }
  const metaData =
    mode === "overwrite" && overwriteSchema ? replacedSchema(snapshot.metadata, overwriteSchema) : undefined;
  const written = metaData ? { ...snapshot, metadata: metaData } : snapshot;
  const added = await adds(written);
  const now = clock();
  const removed = mode === "overwrite" ? [...snapshot.files] : [];
  const actions: Action[] = [
    ...(metaData ? [{ metaData }] : []),
    ...removed.map(([, file]) => ({ remove: removeFor(file, now) })),
    ...added.map((add) => ({ add })),
  ];
  const rows = added.reduce((sum, add) => sum + recordCount(add), 0);
  return {
    actions,
    operation: {
      operation: "WRITE",
      operationParameters: {
        mode: mode === "append" ? "Append" : "Overwrite",
        partitionBy: JSON.stringify(written.metadata.partitionColumns),
      },
      operationMetrics: {
        numFiles: added.length,
        numOutputRows: rows,
        numOutputBytes: added.reduce((sum, add) => sum + add.size, 0),
        ...(mode === "overwrite" ? { numRemovedFiles: removed.length } : {}),
      },
      isBlindAppend: mode === "append",
    },
    requirements: standardRequirements({ removedFiles: removed.map(([key]) => key) }),
  };
}

/** The table's metadata with `schema`, or undefined when it has the same columns and types already. */
function replacedSchema(metadata: Metadata, schema: StructType): Metadata | undefined {
  const shape = (fields: StructType["fields"]) => JSON.stringify(fields.map((f) => [f.name, f.type]));
  if (shape(parseSchema(metadata.schemaString).fields) === shape(schema.fields)) return undefined;
  return { ...metadata, schemaString: serializeSchema(schema) };
}
