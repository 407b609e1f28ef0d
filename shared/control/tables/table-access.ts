import { ResourceNotFoundError, TableLogCorruptError } from "../../api/errors.ts";
import type { TableName } from "../../api/resource-names.ts";
import { tablePrefix } from "../../store/bucket-layout.ts";
import {
  ChangeDataNotRecordedError,
  ChangeFeedSchemaChangeError,
  CorruptLogError,
  DataFilesVacuumedError,
  TableNotFoundError,
  TimestampOutOfRangeError,
  VersionNotFoundError,
} from "../../delta/index.ts";
import type { ObjectStore } from "../../object-store/object-store.ts";
import { withPrefix } from "../../object-store/prefixed-object-store.ts";
import { InvalidParameterError } from "../../errors/coded-error.ts";

/**
 * A table of the bucket by its full name (`/api/2.0/tables/{full_name}/…`), and the Delta errors a
 * read can meet as API errors: a table that is not there is `RESOURCE_DOES_NOT_EXIST`; a version or
 * timestamp it does not hold is `INVALID_PARAMETER_VALUE`; a log it cannot read is `DELTA_LOG_CORRUPT`
 * naming the table and the file; a change feed across a schema change that is not additive is
 * `DELTA_CHANGE_DATA_FEED_INCOMPATIBLE_SCHEMA_CHANGE` naming the table; a version or change whose
 * data files VACUUM removed is `DELTA_FILE_NOT_FOUND_DETAILED` / `DELTA_CHANGE_DATA_FILE_NOT_FOUND`
 * naming the table, the versions and the retention.
 */
export function tableStore(bucket: ObjectStore, name: TableName): ObjectStore {
  return withPrefix(bucket, tablePrefix(name));
}

export async function readingTable<T>(name: TableName, read: () => Promise<T>): Promise<T> {
  try {
    return await read();
  } catch (error) {
    const display = `${name.catalog}.${name.schema}.${name.table}`;
    if (error instanceof TableNotFoundError) {
      throw new ResourceNotFoundError(
        `table ${display} does not exist (no Delta log under ${tablePrefix(name)})`,
        {
          cause: error,
        },
      );
    }
    if (error instanceof VersionNotFoundError || error instanceof TimestampOutOfRangeError) {
      throw new InvalidParameterError(`table ${display}: ${error.message}`, { cause: error });
    }
    if (
      error instanceof ChangeFeedSchemaChangeError ||
      error instanceof ChangeDataNotRecordedError ||
      error instanceof DataFilesVacuumedError
    )
      throw error.forTable(display);
    if (error instanceof CorruptLogError) {
      throw new TableLogCorruptError(
        `table ${display}: ${error.message}. A log file was changed or written outside Ebb: put the original back (log files are never rewritten), or recreate the table with a full refresh of its dataset`,
        { cause: error, data: error.data },
      );
    }
    throw error;
  }
}
