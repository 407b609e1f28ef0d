import { DataFilesVacuumedError, dataFileKey } from "../../delta/index.ts";
import type { PlannedInput } from "../planned-input.ts";
import type { SparkFailure } from "./spark-batch-contract.ts";

/**
 * A job that could not find a change file Ebb planned: VACUUM removed it between the plan and the
 * read (Ebb deletes a data file only through VACUUM). The DuckDB engine refuses the same batch with
 * `DELTA_CHANGE_DATA_FILE_NOT_FOUND` when it copies the file; this gives the Spark job's failure that
 * same error. The job reports a file gone while it reads as an `input` failure, and one gone before
 * it opens the file as a `job` failure (Spark's PATH_NOT_FOUND), each naming the file's URI, which
 * ends with the file's key under the table root.
 */
export function vacuumedChangeFileError(
  input: PlannedInput | undefined,
  failure: SparkFailure,
): DataFilesVacuumedError | undefined {
  if ((failure.kind !== "input" && failure.kind !== "job") || input?.kind !== "table") return undefined;
  const { changeFeed, changeFeedRetention } = input;
  if (!changeFeed || changeFeedRetention === undefined) return undefined;
  if (!/FileNotFound|FILE_NOT_EXIST|PATH_NOT_FOUND|does not exist|No such file/.test(failure.message))
    return undefined;
  const gone = changeFeed.find((file) => failure.message.includes(dataFileKey(file.path)));
  if (!gone) return undefined;
  const table = "dataset" in input.upstream ? input.upstream.dataset : input.upstream.path;
  return new DataFilesVacuumedError("changes", [gone.version], gone.path, changeFeedRetention, table, {
    cause: new Error(failure.message),
  });
}
