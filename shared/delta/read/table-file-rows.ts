import type { DuckSession } from "../../duck/duck-session.ts";
import type { ScratchFolder } from "../../duck/scratch-folder.ts";
import { quoteLiteral } from "../../duck/sql-text.ts";
import type { ObjectStore } from "../../object-store/object-store.ts";
import type { AddFile } from "../log/actions.ts";
import { fileRelationSql, type FileSource, type RelationColumn } from "./file-relation.ts";
import { decodeLogPath } from "../log/data-file-paths.ts";
import { dataFileKey } from "../log/data-file-paths.ts";
import { partitionConstants, tableColumns } from "./scan.ts";
import type { Snapshot } from "./snapshot.ts";

/**
 * The rows of chosen data files as one DuckDB relation, each row tagged with the key of the file it
 * came from (`__ebb_file`). Copy-on-write operations (DELETE, UPDATE, MERGE) use it to find the files
 * holding matching rows and to rewrite exactly those.
 */

/** The column naming each row's data file (its decoded key). */
export const FILE_TAG_COLUMN = "__ebb_file";

/**
 * Local copies of a table's data files. Data files are immutable once written, so a copy stays valid
 * for as long as the folder lives; repeated operations on one table fetch each file once.
 */
export class LocalFileCache {
  readonly #paths = new Map<string, Promise<string>>();

  constructor(
    private readonly store: ObjectStore,
    private readonly scratch: ScratchFolder,
  ) {}

  /** The local path of the data file at `key`, fetching it on first use. */
  localPath(key: string): Promise<string> {
    let path = this.#paths.get(key);
    if (!path) {
      path = this.store.get(key).then((bytes) => this.scratch.write(bytes, ".parquet"));
      path.catch(() => this.#paths.delete(key));
      this.#paths.set(key, path);
    }
    return path;
  }
}

/** A SELECT of every schema column plus `__ebb_file` over `files` of `snapshot`. */
export async function taggedFileRowsSql(
  duck: DuckSession,
  cache: LocalFileCache,
  snapshot: Snapshot,
  files: readonly AddFile[],
): Promise<string> {
  const { schema, columns } = tableColumns(snapshot);
  const tagged: RelationColumn[] = [
    ...columns,
    { name: FILE_TAG_COLUMN, sqlType: "VARCHAR", source: "constant" },
  ];
  const sources: FileSource[] = await Promise.all(
    files.map(async (file) => {
      const key = dataFileKey(file.path);
      return {
        localPath: await cache.localPath(key),
        constants: {
          ...partitionConstants(schema, snapshot.metadata.partitionColumns, file.partitionValues),
          [FILE_TAG_COLUMN]: quoteLiteral(key),
        },
      };
    }),
  );
  return fileRelationSql(duck, sources, tagged);
}

/** The live files of `snapshot` whose keys are in `keys`. */
export function filesByKey(snapshot: Snapshot, keys: Iterable<string>): AddFile[] {
  const wanted = new Set(keys);
  return [...snapshot.files].filter(([key]) => wanted.has(key)).map(([, add]) => add);
}

/** The decoded storage key of an `add`. */
export function fileKey(add: AddFile): string {
  return decodeLogPath(add.path);
}
