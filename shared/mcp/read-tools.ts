import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { EVENT_LOG_TYPES } from "../api/event-types.ts";
import { z } from "zod";
import type { DatasetInfo, EbbClient, EventInfo, UpdateInfo } from "../client/ebb-client.ts";
import { waitForUpdate } from "../client/rewind-preview.ts";
import { markdownTable, utc } from "./markdown.ts";
import { answer, refusingAsTheApi } from "./tool-answers.ts";

/**
 * The tools that only read: pipelines, their graph, updates, events, rewind points, the onset of bad
 * data, and tables as of a version or time. Each is one call (or a few) of the API, answered in
 * words and tables.
 */

const READ_ONLY = { readOnlyHint: true, destructiveHint: false, openWorldHint: false } as const;

const pipelineId = z.string().min(1).describe("the pipeline's id (list_pipelines shows it)");
const table = z
  .string()
  .min(1)
  .describe("the table's full name, catalog.schema.table (describe_pipeline lists them)");
const maxResults = z.number().int().min(1).max(1000).optional().describe("at most this many per page");
const pageToken = z.string().optional().describe("the next_page_token of the previous page");

export function registerReadTools(server: McpServer, client: EbbClient): void {
  server.registerTool(
    "list_pipelines",
    {
      title: "List pipelines",
      description: "The pipelines on this Ebb, with their state (IDLE, RUNNING, FAILED…). Paged.",
      inputSchema: { max_results: maxResults, page_token: pageToken },
      annotations: READ_ONLY,
    },
    (args) =>
      refusingAsTheApi(async () => {
        const page = await client.request<{
          statuses?: { pipeline_id: string; name: string; state: string; definition_version: number }[];
          next_page_token?: string;
        }>("GET", "/api/2.0/pipelines", { query: args });
        const rows = (page.statuses ?? []).map((p) => ({
          pipeline_id: p.pipeline_id,
          name: p.name,
          state: p.state,
          definition_version: p.definition_version,
        }));
        return answer(withNextPage(markdownTable(rows), page.next_page_token), page);
      }),
  );

  server.registerTool(
    "describe_pipeline",
    {
      title: "Describe a pipeline",
      description:
        "A pipeline's dataflow graph: each dataset (streaming table, materialized view), its table's current version and rows, the flows that write it and the datasets it reads; the latest updates and whether a rewind blocks it.",
      inputSchema: { pipeline_id: pipelineId },
      annotations: READ_ONLY,
    },
    ({ pipeline_id }) =>
      refusingAsTheApi(async () => {
        const [pipeline, datasets] = await Promise.all([
          client.getPipeline(pipeline_id),
          client.datasets(pipeline_id),
        ]);
        return answer(describePipeline(pipeline, datasets), { pipeline, datasets: datasets.datasets });
      }),
  );

  server.registerTool(
    "list_updates",
    {
      title: "List updates",
      description:
        "A pipeline's updates, newest first: state, cause, when, whether it was a rewind, its error.",
      inputSchema: { pipeline_id: pipelineId, max_results: maxResults, page_token: pageToken },
      annotations: READ_ONLY,
    },
    ({ pipeline_id, ...query }) =>
      refusingAsTheApi(async () => {
        const page = await client.listUpdates(pipeline_id, query);
        const rows = page.updates.map((u) => ({
          update_id: u.update_id,
          state: u.state,
          cause: u.cause,
          created: utc(u.creation_time),
          kind: updateKind(u),
          error: u.error?.error_code ?? "",
        }));
        return answer(withNextPage(markdownTable(rows), page.next_page_token), page);
      }),
  );

  server.registerTool(
    "get_update",
    {
      title: "Get an update's progress",
      description:
        "An update's state and per-flow progress (rows in and out, batches). With wait_seconds, waits up to that long for it to end first.",
      inputSchema: {
        pipeline_id: pipelineId,
        update_id: z.string().min(1).describe("the update's id"),
        wait_seconds: z
          .number()
          .int()
          .min(0)
          .max(600)
          .optional()
          .describe("wait up to this long for the end"),
      },
      annotations: READ_ONLY,
    },
    ({ pipeline_id, update_id, wait_seconds }) =>
      refusingAsTheApi(async () => {
        const update = wait_seconds
          ? await waitForUpdate(
              client,
              pipeline_id,
              update_id,
              AbortSignal.timeout(wait_seconds * 1000),
            ).catch(async () => (await client.getUpdate(pipeline_id, update_id)).update)
          : (await client.getUpdate(pipeline_id, update_id)).update;
        return answer(describeUpdate(update), { update });
      }),
  );

  server.registerTool(
    "list_events",
    {
      title: "List events",
      description: `A pipeline's event log, newest first. filter takes the Databricks grammar: level='ERROR', event_type = 'rewind_summary', origin.update_id = '…', timestamp > '2026-12-01T00:00:00Z', joined by AND. Event types: ${EVENT_LOG_TYPES.join(", ")}.`,
      inputSchema: {
        pipeline_id: pipelineId,
        filter: z.string().optional().describe("a Databricks event-log filter"),
        order_by: z.enum(["timestamp asc", "timestamp desc"]).optional(),
        max_results: maxResults,
        page_token: pageToken,
      },
      annotations: READ_ONLY,
    },
    ({ pipeline_id, ...query }) =>
      refusingAsTheApi(async () => {
        const page = await client.events(pipeline_id, query);
        return answer(withNextPage(markdownTable(page.events.map(eventRow)), page.next_page_token), page);
      }),
  );

  server.registerTool(
    "list_rewind_points",
    {
      title: "List rewind points",
      description:
        "The points a pipeline can be rewound to, newest first: when each was taken and the table version each dataset goes back to. A point that is not restorable says why. Paged.",
      inputSchema: { pipeline_id: pipelineId, max_results: maxResults, page_token: pageToken },
      annotations: READ_ONLY,
    },
    ({ pipeline_id, ...query }) =>
      refusingAsTheApi(async () => {
        const page = await client.rewindPoints(pipeline_id, query);
        const { rewind_points } = page;
        const rows = rewind_points.map((p) => ({
          rewind_point_id: p.rewind_point_id,
          timestamp: p.timestamp,
          message: p.message,
          tables: p.datasets.map((d) => `${d.identifier}@${d.table_version}`).join(", "),
          restorable: p.restorable === false ? `no: ${p.not_restorable_reason ?? ""}` : "yes",
        }));
        return answer(withNextPage(markdownTable(rows), page.next_page_token), page);
      }),
  );

  server.registerTool(
    "find_onset",
    {
      title: "Find when bad data started",
      description:
        "Scans a table's change feed for the first commit whose rows match a SQL predicate (the bad data), and answers the last good commit, a rewind timestamp between them and the owning pipeline's newest rewind point from before the onset.",
      inputSchema: {
        table,
        predicate: z.string().min(1).describe("a SQL condition over the table's columns, e.g. amount < 0"),
        change_types: z
          .array(z.enum(["insert", "update_postimage", "update_preimage", "delete"]))
          .optional()
          .describe("the change types to look at (default: insert and update_postimage)"),
        starting_version: z.number().int().min(0).optional(),
      },
      annotations: READ_ONLY,
    },
    ({ table: name, ...body }) =>
      refusingAsTheApi(async () => {
        const onset = await client.onset(name, body);
        if (!onset.found)
          return answer(
            `No commit of ${name} from version ${onset.starting_version} on has rows matching \`${body.predicate}\`.`,
            onset,
          );
        const lines = [
          `The first commit with matching rows is version ${onset.first_bad_version} of ${name}, at ${onset.first_bad_commit_time}.`,
          onset.last_good_version !== undefined
            ? `The last good commit is version ${onset.last_good_version}, at ${onset.last_good_commit_time}; a rewind to ${onset.rewind_timestamp} (UTC) falls between them: plan_rewind takes it as rewind_timestamp.`
            : "No commit precedes it: the table held matching rows from its first version.",
          onset.rewind_point
            ? `Pipeline ${onset.pipeline_id}'s newest rewind point from before the onset: ${onset.rewind_point.rewind_point_id} (${onset.rewind_point.timestamp}). Plan it with plan_rewind.`
            : onset.pipeline_id
              ? `Pipeline ${onset.pipeline_id} owns the table; it has no live rewind point from before the onset; plan a rewind to the timestamp above.`
              : "",
        ];
        return answer(lines.filter(Boolean).join("\n"), onset);
      }),
  );

  server.registerTool(
    "query_table",
    {
      title: "Query a table",
      description:
        "Reads a table, now or as of a version or a timestamp (time travel). sql is a query over the table by its name, e.g. SELECT count(*) FROM t WHERE amount < 0, in the SQL dialect of the table's pipeline (Spark SQL for pipeline projects and pipelines.sqlDialect: spark; DuckDB SQL otherwise); without it, the rows themselves up to limit.",
      inputSchema: {
        table,
        sql: z.string().optional().describe("a SELECT over the table"),
        version: z.number().int().min(0).optional().describe("read the table as of this version"),
        timestamp: z.string().optional().describe("read the table as of this time (ISO-8601 with a zone)"),
        limit: z
          .number()
          .int()
          .min(1)
          .max(10_000)
          .optional()
          .describe("at most this many rows (default 100)"),
      },
      annotations: READ_ONLY,
    },
    ({ table: name, ...body }) =>
      refusingAsTheApi(async () => {
        const result = await client.query(name, { ...body, limit: body.limit ?? 100 });
        const heading = `${name} as of version ${result.version} (${result.timestamp}), ${result.rows.length} row${result.rows.length === 1 ? "" : "s"}${result.truncated ? " (truncated: raise limit or narrow the query)" : ""}:`;
        return answer(`${heading}\n\n${markdownTable(result.rows)}`, result);
      }),
  );

  server.registerTool(
    "table_history",
    {
      title: "Table history",
      description:
        "DESCRIBE HISTORY of a table: each version's time, operation (WRITE, MERGE, RESTORE…) and metrics.",
      inputSchema: { table },
      annotations: READ_ONLY,
    },
    ({ table: name }) =>
      refusingAsTheApi(async () => {
        const { history } = await client.history(name);
        const rows = history.map((h) => ({
          version: h["version"],
          timestamp: h["timestamp"],
          operation: h["operation"],
          parameters: h["operationParameters"],
        }));
        return answer(markdownTable(rows), { history });
      }),
  );
}

/** The graph as a person reads it: one line per dataset with what it reads. */
export function describePipeline(
  pipeline: Record<string, unknown>,
  { datasets }: { readonly datasets: readonly DatasetInfo[] },
): string {
  const rewind = pipeline["rewind"] as { blocked?: boolean } | undefined;
  const latest = (pipeline["latest_updates"] as { update_id: string; state: string }[] | undefined)?.[0];
  const lines = [
    `Pipeline ${String(pipeline["name"])} (${String(pipeline["pipeline_id"])}), ${String(pipeline["state"])}, definition version ${String(pipeline["definition_version"])}.`,
    latest ? `Latest update: ${latest.update_id}, ${latest.state}.` : "No update has run yet.",
    rewind?.blocked
      ? "A rewind did not finish: the pipeline is blocked until the same rewind is run again to completion (plan_rewind, then rewind)."
      : "",
    "",
    markdownTable(
      datasets.map((d) => ({
        dataset: d.identifier,
        type: d.type,
        version: d.version ?? "not written",
        rows: d.row_count ?? "",
        reads: d.upstreams.join(", "),
        flows: d.flows.join(", "),
      })),
    ),
  ];
  return lines.filter((line, i) => line !== "" || i === 3).join("\n");
}

function describeUpdate(update: UpdateInfo): string {
  const lines = [
    `Update ${update.update_id} of pipeline ${update.pipeline_id}: ${update.state} (${updateKind(update)}, created ${utc(update.creation_time)}).`,
  ];
  if (update.error) lines.push(`Error ${update.error.error_code}: ${update.error.message}`);
  const progress = Object.entries(update.progress ?? {});
  if (progress.length > 0)
    lines.push(
      "",
      markdownTable(
        progress.map(([flow, p]) => ({
          flow,
          dataset: p.dataset ?? "",
          status: p.status,
          batches: p.batches,
          rows_in: p.rows_in,
          rows_out: p.rows_out,
          ...(p.refresh ? { refresh: p.refresh } : {}),
        })),
      ),
    );
  return lines.join("\n");
}

function updateKind(update: UpdateInfo): string {
  const spec = update.rewind_spec as { dry_run?: boolean } | undefined;
  if (spec) return spec.dry_run ? "rewind dry run" : "rewind";
  if (update["full_refresh"] === true) return "full refresh";
  if (update["validate_only"] === true) return "validation";
  return "update";
}

function eventRow(event: EventInfo) {
  return {
    timestamp: event.timestamp,
    level: event.level,
    event_type: event.event_type,
    message: event.message,
    update_id: event.origin["update_id"] ?? "",
  };
}

function withNextPage(text: string, next: string | undefined): string {
  return next ? `${text}\n\nMore: call again with page_token "${next}".` : text;
}
