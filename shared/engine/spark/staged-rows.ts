import { quoteLiteral } from "../../duck/sql-text.ts";
import { listAllKeys, type ObjectStore } from "../../object-store/object-store.ts";
import type { Sandbox } from "../sandbox.ts";
import { SparkJobFailedError } from "./errors.ts";

/**
 * The rows a Spark job staged (its Parquet files in the attempt's folder under the table root) as a
 * SELECT in the batch's sandbox: an AUTO CDC batch whose flow ran on Spark applies them by key there
 * (apply-changes.ts), against the per-key state, and commits the MERGE. The staged files are never
 * committed themselves; VACUUM removes them with a dead attempt's.
 *
 * Every Parquet file of the folder is read, also one without rows (Spark writes one for an empty
 * output, and the manifest lists only files with rows): its schema is the rows' when none came.
 */
export async function stagedRowsSql(
  tableStore: ObjectStore,
  stagedPath: string,
  sandbox: Sandbox,
  failure: { readonly flow: string; readonly seq: number; readonly jobId: string },
): Promise<string> {
  const keys = (await listAllKeys(tableStore, `${stagedPath.replace(/\/+$/, "")}/`))
    .map((info) => info.key)
    .filter((key) => key.endsWith(".parquet"))
    .sort();
  if (keys.length === 0)
    throw new SparkJobFailedError(
      failure.flow,
      failure.seq,
      failure.jobId,
      `it staged no files in ${stagedPath}`,
    );
  const paths: string[] = [];
  for (const key of keys) paths.push(await sandbox.writeFile(await tableStore.get(key), ".parquet"));
  return `SELECT * FROM read_parquet([${paths.map(quoteLiteral).join(", ")}])`;
}

/** Deletes an attempt's staged rows (every object of its folder), once no retry can read them. */
export async function deleteStagedRows(tableStore: ObjectStore, stagedPath: string): Promise<void> {
  const keys = await listAllKeys(tableStore, `${stagedPath.replace(/\/+$/, "")}/`);
  if (keys.length > 0) await tableStore.deleteMany(keys.map((info) => info.key));
}
