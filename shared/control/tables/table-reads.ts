import type { TableName } from "../../api/resource-names.ts";
import type { QueryTableBody, TableChangesQuery } from "../../api/request-schemas.ts";
import {
  dataFileKey,
  DeltaTable,
  fileRelationSql,
  type FileSource,
  type Snapshot,
  loadSnapshot,
  partitionConstants,
  readHistory,
  tableColumns,
  vacuumedFilesError,
  versionAtTimestamp,
} from "../../delta/index.ts";
import { quoteIdentifier } from "../../duck/sql-text.ts";
import { Sandbox } from "../../engine/sandbox.ts";
import { parseTimestamp } from "../../pipeline/timestamp.ts";
import { ObjectNotFoundError } from "../../object-store/errors.ts";
import type { ObjectStore } from "../../object-store/object-store.ts";
import { toJsonRows } from "./json-values.ts";
import { readingTable, tableStore } from "./table-access.ts";
import { InvalidParameterError } from "../../errors/coded-error.ts";
import { ResultTooLargeError } from "../../api/errors.ts";
import { describeBytes } from "../../pipeline/byte-size.ts";
import { answerBytesFromEnv, planAnswer } from "./answer-size.ts";
import { travelledReferences, type TimeTravel } from "../../sql/index.ts";
import { SqlUnsupportedError } from "../../sql/errors.ts";
import { sparkToDuckDb } from "../../sql/spark-to-duckdb.ts";
import type { SqlDialect } from "../../pipeline/sql-dialect.ts";

/**
 * Time travel over any table of the bucket (api.md "Tables"): DESCRIBE HISTORY, the change data feed
 * (paged), and a read as of a version or timestamp, optionally through a SELECT that runs in the
 * engine's sandbox (it sees the table as `t` and by its name, and nothing else).
 */

export async function tableHistory(bucket: ObjectStore, name: TableName) {
  const entries = await readingTable(name, () => readHistory(tableStore(bucket, name)));
  if (entries.length === 0) await readingTable(name, () => loadSnapshot(tableStore(bucket, name)));
  return {
    history: entries.map((entry) => ({ ...entry, timestamp: new Date(entry.timestamp).toISOString() })),
  };
}

const DEFAULT_CHANGES_PAGE = 1000;

/** `page_token` of the changes listing: the offset of the next row within the same range. */
function changesToken(offset: number, query: TableChangesQuery, endingVersion: number): string {
  return Buffer.from(JSON.stringify({ o: offset, s: query.starting_version, e: endingVersion })).toString(
    "base64url",
  );
}

function readChangesToken(token: string): { o: number; s: number; e: number } {
  try {
    const parsed = JSON.parse(Buffer.from(token, "base64url").toString("utf8")) as {
      o: number;
      s: number;
      e: number;
    };
    if ([parsed.o, parsed.s, parsed.e].every((n) => Number.isInteger(n) && n >= 0)) return parsed;
  } catch {
    // refused below
  }
  throw new InvalidParameterError(
    `page_token is not one this listing issued: pass next_page_token unchanged`,
  );
}

export async function tableChanges(bucket: ObjectStore, name: TableName, query: TableChangesQuery) {
  const resumed = query.page_token === undefined ? undefined : readChangesToken(query.page_token);
  const store = tableStore(bucket, name);
  return readingTable(name, async () => {
    const table = await DeltaTable.open(store);
    try {
      const from = resumed?.s ?? query.starting_version;
      const to = resumed?.e ?? query.ending_version ?? table.snapshot.version;
      if (to < from) {
        throw new InvalidParameterError(`ending_version ${to} is before starting_version ${from}`);
      }
      const rows = await table.changes(from, to);
      rows.sort((a, b) => Number(a["_commit_version"]) - Number(b["_commit_version"]));
      const offset = resumed?.o ?? 0;
      const size = query.max_results ?? DEFAULT_CHANGES_PAGE;
      const page = rows.slice(offset, offset + size);
      const more = offset + size < rows.length;
      return {
        starting_version: from,
        ending_version: to,
        changes: toJsonRows(page),
        ...(more
          ? { next_page_token: changesToken(offset + size, { ...query, starting_version: from }, to) }
          : {}),
      };
    } finally {
      await table.close();
    }
  });
}

/**
 * A read of `name` through a SELECT in `dialect`, the dialect of the table's pipeline
 * (table-sql-dialect.ts): Spark SQL is translated to DuckDB's before it runs, or refused
 * (`UNSUPPORTED_SQL`, 400) naming where it is.
 */
export async function queryTable(
  bucket: ObjectStore,
  name: TableName,
  body: QueryTableBody,
  dialect: SqlDialect,
) {
  if (body.version !== undefined && body.timestamp !== undefined) {
    throw new InvalidParameterError("send version or timestamp, not both");
  }
  const time = body.timestamp === undefined ? undefined : parseTimestamp(body.timestamp);
  if (body.timestamp !== undefined && time === undefined) {
    throw new InvalidParameterError(
      `timestamp ${JSON.stringify(body.timestamp)} is not UTC "yyyy-MM-dd HH:mm:ss" or ISO-8601 with a zone`,
    );
  }
  const store = tableStore(bucket, name);
  // Spark's time travel in the query (`FROM t VERSION AS OF 3`): each such reference reads its version.
  const { sql: written, references } = travelledReferences(body.sql ?? "SELECT * FROM t", [
    "t",
    name.table,
    `${name.catalog}.${name.schema}.${name.table}`,
  ]);
  const sql =
    dialect === "spark"
      ? inSparkDialect(
          written,
          references.map((reference) => reference.relation),
        )
      : written;
  return readingTable(name, async () => {
    const version = time === undefined ? body.version : await versionAtTimestamp(store, time);
    // Not in the sandbox's session: a log checkpoint is decoded from a scratch folder outside the
    // sandbox's own, which its lock-down refuses to read.
    const snapshot = await loadSnapshot(store, version !== undefined ? { version } : {});
    const travelled = [];
    for (const reference of references) {
      const at = await travelVersion(store, reference.at);
      travelled.push({ relation: reference.relation, snapshot: await loadSnapshot(store, { version: at }) });
    }
    const sandbox = await Sandbox.open();
    try {
      await loadSnapshotInto(sandbox, store, snapshot, "t");
      for (const { relation, snapshot: past } of travelled)
        await loadSnapshotInto(sandbox, store, past, relation);
      if (name.table !== "t")
        await sandbox.run(`CREATE TEMP VIEW ${quoteIdentifier(name.table)} AS SELECT * FROM t`);
      // Rows past the limit are never computed: one more tells whether the answer was truncated.
      await sandbox.runUserQuery(sql, "__ebb_result", "the query", {
        maxRows: body.limit + 1,
      });
      // Sized before it is read: an answer over the limit is refused, never built.
      const plan = await planAnswer(sandbox, "__ebb_result", Infinity);
      const maxBytes = answerBytesFromEnv();
      if (plan.totalBytes > maxBytes) throw answerTooLarge(name, plan.totalBytes, maxBytes);
      const rows = await sandbox.answerRows("SELECT * FROM __ebb_result");
      return {
        version: snapshot.version,
        timestamp: new Date(snapshot.timestamp).toISOString(),
        rows: toJsonRows(rows.slice(0, body.limit)),
        truncated: rows.length > body.limit,
      };
    } finally {
      await sandbox.close();
    }
  });
}

/** A table query's Spark SQL as DuckDB's, or refused naming the dialect's reason. */
function inSparkDialect(sql: string, relations: readonly string[]): string {
  try {
    return sparkToDuckDb(sql, { relations });
  } catch (error) {
    if (!(error instanceof SqlUnsupportedError)) throw error;
    const reason = error.message.replace(/^line \d+, column \d+: /, "");
    throw new SqlUnsupportedError(
      `the table query (Spark SQL: the table's pipeline sets pipelines.sqlDialect: spark): ${reason}`,
      error,
    );
  }
}

/**
 * Copies a table version's data files into the sandbox and makes them the temp table `relation`
 * (the snapshot is loaded outside the sandbox: its lock-down refuses a checkpoint's scratch folder).
 */
export async function loadSnapshotInto(
  sandbox: Sandbox,
  store: ObjectStore,
  snapshot: Snapshot,
  relation: string,
): Promise<void> {
  const { schema, columns } = tableColumns(snapshot);
  const sources: FileSource[] = [];
  const files = [...snapshot.files.values()];
  const vacuumed = vacuumedFilesError(
    "snapshot",
    snapshot,
    files.map((file) => ({ path: file.path, version: snapshot.version })),
  );
  for (const [i, file] of files.entries()) {
    let bytes: Uint8Array;
    try {
      bytes = await store.get(dataFileKey(file.path));
    } catch (error) {
      if (error instanceof ObjectNotFoundError) throw vacuumed([i]);
      throw error;
    }
    sources.push({
      localPath: await sandbox.writeFile(bytes, ".parquet"),
      constants: partitionConstants(schema, snapshot.metadata.partitionColumns, file.partitionValues),
    });
  }
  await sandbox.run(
    `CREATE TEMP TABLE ${quoteIdentifier(relation)} AS ${await fileRelationSql(sandbox.duck, sources, columns)}`,
  );
}

function answerTooLarge(name: TableName, bytes: number, limit: number): ResultTooLargeError {
  return new ResultTooLargeError(
    `the answer of the query on ${name.catalog}.${name.schema}.${name.table} is ${describeBytes(bytes)}, over the ${describeBytes(limit)} one answer may carry: add a LIMIT or a narrower WHERE, select fewer or shorter columns, or run it through the SQL statements API (POST /api/2.0/sql/statements; ebb sql), which answers large results in chunks`,
    { data: { bytes, limit } },
  );
}

/**
 * The version a time travel names: its own, or for a timestamp the latest commit at or before it
 * (Delta's rule). One rule for the query endpoint and the statements API.
 */
export async function travelVersion(store: ObjectStore, at: TimeTravel): Promise<number> {
  if ("version" in at) return at.version;
  const time = parseTimestamp(at.timestamp);
  if (time === undefined) {
    throw new InvalidParameterError(
      `TIMESTAMP AS OF ${JSON.stringify(at.timestamp)} is not UTC "yyyy-MM-dd HH:mm:ss" or ISO-8601 with a zone`,
    );
  }
  return versionAtTimestamp(store, time);
}
