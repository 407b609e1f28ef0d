import { pipelineIdParam, tableNameParam } from "../../api/resource-names.ts";
import { loadSnapshot, openChangeFeed, readHistory } from "../../delta/index.ts";
import { quoteIdentifier, quoteLiteral } from "../../duck/sql-text.ts";
import type { Sandbox } from "../../engine/sandbox.ts";
import type { StatementSource } from "../../sql/index.ts";
import type { PipelineEvent } from "../../store/event-log-repository.ts";
import { requirePipeline, type ControlPlane } from "../plane/control-plane.ts";
import { eventTypesRead } from "./event-log-pushdown.ts";
import { readingTable, tableStore } from "../tables/table-access.ts";
import { loadSnapshotInto, travelVersion } from "../tables/table-reads.ts";

/**
 * The relations a translated statement reads, loaded into its sandbox by trusted code before the
 * user's SQL runs (as the onset finder hands in the change feed): the query itself sees only them.
 *
 * - `event_log('<id>')`: the pipeline's live events, with Databricks' columns (`details`, `error`
 *   and `sequence` as JSON text, `origin` a struct);
 * - `table_changes`: the change data feed, as `GET …/changes` reads it;
 * - `DESCRIBE HISTORY`: the table's commits, with Databricks' column names;
 * - a table: its latest version, or the one its time travel names (`VERSION AS OF 3`, `TIMESTAMP AS
 *   OF '…'`: the latest commit at or before it, as Delta resolves it).
 */

/** Events read per page. */
const EVENT_PAGE = 500;

export async function loadStatementSource(
  plane: ControlPlane,
  sandbox: Sandbox,
  source: StatementSource,
  /** The statement's parse tree, for an event log: only the event types it keeps are read. */
  statement: unknown,
): Promise<void> {
  switch (source.kind) {
    case "event_log":
      return loadEventLog(
        plane,
        sandbox,
        pipelineIdParam(source.pipelineId),
        source.relation,
        eventTypesRead(statement, source.relation),
      );
    case "table_changes":
      return loadChanges(plane, sandbox, source);
    case "history":
      return loadHistory(plane, sandbox, source.table, source.relation);
    case "table": {
      const name = tableNameParam(source.table);
      const store = tableStore(plane.bucket, name);
      return readingTable(name, async () => {
        const at =
          source.version !== undefined
            ? { version: source.version }
            : source.timestamp !== undefined
              ? { timestamp: source.timestamp }
              : undefined;
        const version = at && (await travelVersion(store, at));
        const snapshot = await loadSnapshot(store, version === undefined ? {} : { version });
        await loadSnapshotInto(sandbox, store, snapshot, source.relation);
      });
    }
  }
}

const EVENT_COLUMNS = {
  id: "VARCHAR",
  sequence: "VARCHAR",
  origin:
    "STRUCT(pipeline_id VARCHAR, pipeline_name VARCHAR, update_id VARCHAR, flow_id VARCHAR, flow_name VARCHAR, dataset_name VARCHAR, batch_id BIGINT)",
  timestamp: "TIMESTAMP",
  message: "VARCHAR",
  level: "VARCHAR",
  error: "VARCHAR",
  details: "VARCHAR",
  event_type: "VARCHAR",
  maturity_level: "VARCHAR",
} as const;

/** The pipeline's events, or only those of `eventTypes` (read by type: the statement keeps no others). */
async function loadEventLog(
  plane: ControlPlane,
  sandbox: Sandbox,
  pipelineId: string,
  relation: string,
  eventTypes: readonly string[] | undefined,
) {
  await requirePipeline(plane, pipelineId);
  const queries = eventTypes ? [...new Set(eventTypes)].map((eventType) => ({ eventType })) : [{}];
  const events: PipelineEvent[] = [];
  for (const query of queries) {
    let pageToken: string | undefined;
    do {
      const page = await plane.events.query(
        pipelineId,
        { order: "asc", ...query },
        { limit: EVENT_PAGE, ...(pageToken ? { pageToken } : {}) },
      );
      events.push(...page.items);
      pageToken = page.nextPageToken;
    } while (pageToken);
  }
  if (queries.length > 1)
    events.sort((a, b) => a.sequence.control_plane_seq_no - b.sequence.control_plane_seq_no);
  const lines = events.map((event) => JSON.stringify(eventRow(event)));
  await loadJsonLines(sandbox, lines, EVENT_COLUMNS, relation);
}

function eventRow(event: PipelineEvent): Record<keyof typeof EVENT_COLUMNS, unknown> {
  return {
    id: event.id,
    sequence: JSON.stringify(event.sequence),
    origin: event.origin,
    timestamp: utcText(Date.parse(event.timestamp)),
    message: event.message,
    level: event.level,
    error: event.error === undefined ? null : JSON.stringify(event.error),
    details: JSON.stringify(event.details),
    event_type: event.event_type,
    maturity_level: event.maturity_level,
  };
}

async function loadChanges(
  plane: ControlPlane,
  sandbox: Sandbox,
  source: Extract<StatementSource, { kind: "table_changes" }>,
) {
  const name = tableNameParam(source.table);
  const store = tableStore(plane.bucket, name);
  await readingTable(name, async () => {
    const feed = await openChangeFeed(store, source.startingVersion, source.endingVersion, {
      viewName: "statement_changes",
    });
    const file = await sandbox.newPath(".parquet");
    try {
      await feed.duck.run(`COPY statement_changes TO ${quoteLiteral(file)} (FORMAT parquet)`);
    } finally {
      await feed.close();
    }
    await sandbox.run(
      `CREATE TEMP TABLE ${quoteIdentifier(source.relation)} AS SELECT * FROM read_parquet(${quoteLiteral(file)})`,
    );
  });
}

/** DESCRIBE HISTORY's columns (Delta's), in its order; those Ebb does not record are NULL. */
const HISTORY_COLUMNS = {
  version: "BIGINT",
  timestamp: "TIMESTAMP",
  userId: "VARCHAR",
  userName: "VARCHAR",
  operation: "VARCHAR",
  operationParameters: "MAP(VARCHAR, VARCHAR)",
  job: "VARCHAR",
  notebook: "VARCHAR",
  clusterId: "VARCHAR",
  readVersion: "BIGINT",
  isolationLevel: "VARCHAR",
  isBlindAppend: "BOOLEAN",
  operationMetrics: "MAP(VARCHAR, VARCHAR)",
  userMetadata: "VARCHAR",
  engineInfo: "VARCHAR",
} as const;

async function loadHistory(plane: ControlPlane, sandbox: Sandbox, table: string, relation: string) {
  const name = tableNameParam(table);
  const store = tableStore(plane.bucket, name);
  const entries = await readingTable(name, async () => {
    const history = await readHistory(store);
    // No commits is no table: loading it says so.
    if (history.length === 0) await loadSnapshot(store);
    return history;
  });
  const lines = entries.map((entry) =>
    JSON.stringify({
      version: entry.version,
      timestamp: utcText(entry.timestamp),
      operation: entry.operation ?? null,
      operationParameters: textValues(entry.operationParameters),
      readVersion: entry.readVersion ?? null,
      isBlindAppend: entry.isBlindAppend ?? null,
      operationMetrics: textValues(entry.operationMetrics),
      engineInfo: entry.engineInfo ?? null,
    }),
  );
  await loadJsonLines(sandbox, lines, HISTORY_COLUMNS, relation);
}

/** Delta's maps of strings: values that are not strings become their JSON text. */
function textValues(record: Readonly<Record<string, unknown>>): Record<string, string> {
  return Object.fromEntries(
    Object.entries(record).map(([key, value]) => [
      key,
      typeof value === "string" ? value : JSON.stringify(value),
    ]),
  );
}

/** `yyyy-MM-dd HH:mm:ss.SSS`, UTC: DuckDB reads it as a TIMESTAMP. */
function utcText(ms: number): string {
  return new Date(ms).toISOString().slice(0, 23).replace("T", " ");
}

async function loadJsonLines(
  sandbox: Sandbox,
  lines: readonly string[],
  columns: Readonly<Record<string, string>>,
  relation: string,
): Promise<void> {
  const file = await sandbox.writeFile(Buffer.from(lines.join("\n") + "\n"), ".json");
  const types = Object.entries(columns)
    .map(([column, type]) => `${quoteLiteral(column)}: ${quoteLiteral(type)}`)
    .join(", ");
  await sandbox.run(
    `CREATE TEMP TABLE ${quoteIdentifier(relation)} AS SELECT * FROM read_json(${quoteLiteral(file)}, ` +
      `format = 'newline_delimited', columns = {${types}})`,
  );
}
