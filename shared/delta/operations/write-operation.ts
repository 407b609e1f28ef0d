import type { Action, Metadata } from "../log/actions.ts";
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
  if (mode === "overwrite" && tableProperties(snapshot.metadata).appendOnly) {
    throw new AppendOnlyTableError("WRITE (Overwrite)");
  }
  const metaData =
    mode === "overwrite" && overwriteSchema ? replacedSchema(snapshot.metadata, overwriteSchema) : undefined;
  if (metaData) {
    const prepared = await prepareWrite(context, { ...snapshot, metadata: metaData }, source, mode);
    return { ...prepared, actions: [{ metaData }, ...prepared.actions] };
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
  const rows = adds.reduce((sum, add) => sum + recordCount(add), 0);
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

/** The table's metadata with `schema`, or undefined when it has the same columns and types already. */
function replacedSchema(metadata: Metadata, schema: StructType): Metadata | undefined {
  const shape = (fields: StructType["fields"]) => JSON.stringify(fields.map((f) => [f.name, f.type]));
  if (shape(parseSchema(metadata.schemaString).fields) === shape(schema.fields)) return undefined;
  return { ...metadata, schemaString: serializeSchema(schema) };
}
