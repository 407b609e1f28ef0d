import { loadSnapshot, parseSchema, TableNotFoundError, type StructType } from "../delta/index.ts";
import type { DatasetCatalog } from "./dataset-catalog.ts";

/** A dataset's table as the query previews need it: its columns, and whether it holds no file. */
export interface TableShape {
  readonly schema: StructType;
  readonly empty: boolean;
}

/** The table of dataset `name` at its latest version; undefined while no table exists yet. */
export async function readTableShape(catalog: DatasetCatalog, name: string): Promise<TableShape | undefined> {
  try {
    const snapshot = await loadSnapshot(catalog.tableStore(name));
    return { schema: parseSchema(snapshot.metadata.schemaString), empty: snapshot.files.size === 0 };
  } catch (error) {
    if (error instanceof TableNotFoundError) return undefined;
    throw error;
  }
}
