import type { OnsetAnswer } from "../../api/onset-answer.ts";
import type { TableName } from "../../api/resource-names.ts";
import type { OnsetBody } from "../../api/request-schemas.ts";
import {
  DataFilesVacuumedError,
  type HistoryEntry,
  loadSnapshot,
  openChangeFeed,
  readHistory,
  restoredVersion,
  walkLineage,
} from "../../delta/index.ts";
import { quoteLiteral } from "../../duck/sql-text.ts";
import { Sandbox } from "../../engine/sandbox.ts";
import { SqlUnsupportedError } from "../../sql/errors.ts";
import { sparkConditionToDuckDb } from "../../sql/spark-to-duckdb.ts";
import { listRewindPoints } from "../../rewind/rewind-points.ts";
import { loadPipeline, rewindEnvironment, type ControlPlane } from "../plane/control-plane.ts";
import { rewindPointView } from "./rewind-point-views.ts";
import { readingTable, tableStore } from "../tables/table-access.ts";
import { tableSqlDialect } from "../tables/table-sql-dialect.ts";
import type { ObjectStore } from "../../object-store/object-store.ts";

/**
 * The onset finder (api.md "Rewind helpers"; the seed's "Rewind to a timestamp" query, as one call):
 *
 * 1. Scan the change data feed from `starting_version`, else from the latest commit that reset the
 *    table's timeline (RESTORE, TRUNCATE, a full overwrite), else from version 1 (version 0 records
 *    no change data); versions whose data files VACUUM has removed (a RESTORE's removed files, a
 *    week after a rewind) are skipped: the scan starts after them (the answer's `starting_version`).
 * 2. In the engine's sandbox (the predicate is user SQL), the first bad version and its commit time:
 *    the earliest change of the given types matching the predicate.
 * 3. The last good commit time: the newest commit before the first bad version.
 * 4. `rewind_timestamp`: the midpoint of the two in the seed's `yyyy-MM-dd HH:mm:ss` form, computed
 *    as the seed's SQL recipe computes it (`unix_timestamp` of each, averaged, `from_unixtime`), so
 *    both answer the same second (strictly between the commits whenever they are at least 2 s apart).
 * 5. The pipeline that owns the table, and its newest live rewind point that restores the table to a
 *    version whose rows all come from the live timeline before the first bad version (of the same
 *    table: not one dropped and made again since), not counting dry runs' points (each repeats the
 *    target it rehearsed, and would crowd out the capture). Version numbers alone do not say it: after
 *    a rewind, a version numbered below the onset may lie on the abandoned timeline and hold bad rows
 *    (the lineage rule of table-lineage.ts: a RESTORE of `t` abandons `t+1 ..` itself).
 * Nothing found: `found: false`.
 */

const TIMELINE_RESETS = new Set(["RESTORE", "TRUNCATE", "CREATE OR REPLACE TABLE", "REPLACE TABLE"]);

/** The onset finder's answer, with the rewind point as `GET …/rewind-points` lists it. */
export type Onset = OnsetAnswer<ReturnType<typeof rewindPointView>>;

export async function findOnset(plane: ControlPlane, name: TableName, written: OnsetBody): Promise<Onset> {
  const { owner, dialect } = await tableSqlDialect(plane, name);
  const body = dialect === "spark" ? inSparkDialect(written) : written;
  const { onset, history } = await tableOnset(plane.bucket, name, body);
  if (owner === undefined) return onset;
  const point = onset.found
    ? await pointBefore(plane, owner, name, cleanVersions(history, onset.first_bad_version!))
    : undefined;
  return { ...onset, pipeline_id: owner, ...(point ? { rewind_point: point } : {}) };
}

/** The predicate of a table a `spark`-dialect pipeline owns is Spark SQL: translated, or refused naming it. */
function inSparkDialect(body: OnsetBody): OnsetBody {
  try {
    return { ...body, predicate: sparkConditionToDuckDb(body.predicate) };
  } catch (error) {
    if (!(error instanceof SqlUnsupportedError)) throw error;
    const reason = error.message.replace(/^line \d+, column \d+: /, "");
    throw new SqlUnsupportedError(
      `the onset predicate (Spark SQL: the table's pipeline sets pipelines.sqlDialect: spark): ${reason}`,
      error,
    );
  }
}

async function tableOnset(
  bucket: ObjectStore,
  name: TableName,
  body: OnsetBody,
): Promise<{ onset: Onset; history: HistoryEntry[] }> {
  const store = tableStore(bucket, name);
  return readingTable(name, async () => {
    const history = await readHistory(store);
    // An empty history is no table at all: loading it says so (not found, rather than "no version 1").
    if (history.length === 0) await loadSnapshot(store);
    const latest = history[0]?.version ?? 0;
    let from = body.starting_version ?? scanStart(history);
    let first: { version: number; time: number } | undefined;
    for (;;) {
      try {
        first = from > latest ? undefined : await firstBadChange(store, from, body);
        break;
      } catch (error) {
        // Step 1: versions whose files VACUUM removed cannot be scanned; the scan starts after them.
        if (!(error instanceof DataFilesVacuumedError)) throw error;
        from = error.versions.at(-1)! + 1;
      }
    }
    if (!first) return { onset: { found: false, starting_version: from }, history };
    const lastGood = history.find((entry) => entry.version < first.version);
    const onset = {
      found: true,
      starting_version: from,
      first_bad_version: first.version,
      first_bad_commit_time: new Date(first.time).toISOString(),
    };
    if (!lastGood) return { onset, history };
    return {
      onset: {
        ...onset,
        last_good_version: lastGood.version,
        last_good_commit_time: new Date(lastGood.timestamp).toISOString(),
        rewind_timestamp: utcSeconds(1000 * recipeMidpoint(lastGood.timestamp, first.time)),
      },
      history,
    };
  });
}

/**
 * Step 5: which versions of the table hold only rows from before the onset: those whose whole
 * lineage lies on the latest version's lineage, below the first bad version. History is newest first.
 */
function cleanVersions(history: readonly HistoryEntry[], firstBad: number): (version: number) => boolean {
  const restores = new Map(history.map((entry) => [entry.version, restoredVersion(entry)]));
  const lineage = (version: number) => walkLineage(version, -1, (v) => restores.get(v)).live;
  const clean = new Set(lineage(history[0]?.version ?? -1).filter((version) => version < firstBad));
  return (version) => lineage(version).every((v) => clean.has(v));
}

/** Step 5: the owner's newest live point at which the table (the same one) holds only clean rows. */
async function pointBefore(
  plane: ControlPlane,
  owner: string,
  name: TableName,
  isClean: (version: number) => boolean,
) {
  const { pipeline } = await loadPipeline(plane, owner);
  const tableId = (await loadSnapshot(tableStore(plane.bucket, name))).metadata.id;
  const points = await listRewindPoints(rewindEnvironment(plane, owner, pipeline));
  const point = points.find((candidate) => {
    if (candidate.kind === "dry-run") return false;
    const at = candidate.cut.datasets.get(name.table);
    // A point captured before points recorded table ids cannot be told apart: it is taken as the same table.
    return at !== undefined && (at.tableId === "" || at.tableId === tableId) && isClean(at.version);
  });
  return point && rewindPointView(point, pipeline.definition.catalog, pipeline.definition.schema);
}

/** History is newest first. */
function scanStart(history: readonly HistoryEntry[]): number {
  const reset = history.find(
    (entry) =>
      TIMELINE_RESETS.has(entry.operation ?? "") ||
      (entry.operation === "WRITE" && entry.operationParameters["mode"] === "Overwrite"),
  );
  return Math.max(1, reset?.version ?? 0);
}

async function firstBadChange(
  store: ObjectStore,
  from: number,
  body: OnsetBody,
): Promise<{ version: number; time: number } | undefined> {
  const sandbox = await Sandbox.open();
  try {
    // The change feed is read by trusted code outside the sandbox and handed in as one parquet file.
    const feed = await openChangeFeed(store, from, undefined, { viewName: "onset_changes" });
    const file = await sandbox.newPath(".parquet");
    try {
      await feed.duck.run(`COPY onset_changes TO ${quoteLiteral(file)} (FORMAT parquet)`);
    } finally {
      await feed.close();
    }
    await sandbox.run(`CREATE TEMP TABLE changes AS SELECT * FROM read_parquet(${quoteLiteral(file)})`);
    const types = body.change_types.map(quoteLiteral).join(", ");
    const predicate = await sandbox.checkedCondition(body.predicate, "the onset predicate");
    await sandbox.runUserQuery(
      `SELECT min(_commit_version) AS version, epoch_ms(min(_commit_timestamp)) AS time FROM changes ` +
        `WHERE _change_type IN (${types}) AND ${predicate}`,
      "__ebb_onset",
      "the onset predicate",
    );
    const [row] = await sandbox.rows("SELECT version, time FROM __ebb_onset");
    if (!row || row["version"] === null || row["version"] === undefined) return undefined;
    return { version: Number(row["version"]), time: Number(row["time"]) };
  } finally {
    await sandbox.close();
  }
}

/** Epoch seconds: `from_unixtime((unix_timestamp(a) + unix_timestamp(b)) / 2)`, each step truncating. */
function recipeMidpoint(aMs: number, bMs: number): number {
  return Math.trunc((Math.floor(aMs / 1000) + Math.floor(bMs / 1000)) / 2);
}

/** `yyyy-MM-dd HH:mm:ss`, UTC (the seed's rewind_timestamp form). */
function utcSeconds(ms: number): string {
  return new Date(ms).toISOString().slice(0, 19).replace("T", " ");
}
