import type { Command } from "commander";
import { topCommand } from "./command-catalogue.ts";
import { api, printObject, type Out } from "./pipeline-commands.ts";
import { formatJsonLines, formatTable } from "./output-format.ts";
import { onsetOutcome } from "./onset-outcome.ts";
import { optimizeOutcome } from "./optimize-outcome.ts";
import { StatementFailedError } from "./statement-failed-error.ts";

/**
 * `ebb events`, `ebb rewind-points`, `ebb state`, `ebb history`, `ebb changes`, `ebb query`,
 * `ebb onset`, `ebb sql`: reading a pipeline's event log, its flows' state and its tables' past
 * through the API; and `ebb optimize`, their upkeep.
 */

/** `ebb events` shows this many unless `--max` says otherwise; a longer log says so on stderr. */
const DEFAULT_EVENTS = 50;
/** The events listing's largest page (its `max_results` bound). */
const EVENTS_PAGE = 1000;

export function addInspectCommands(program: Command, out: Out, err: Out): void {
  const print = (rows: readonly Record<string, unknown>[], json?: boolean) =>
    out(json ? formatJsonLines(rows) : formatTable(rows));

  topCommand(program, "events")
    .option("--type <types>", "only these event types (comma-separated)")
    .option("--since <time>", "only events after this time (ISO-8601)")
    .option("--filter <filter>", "a filter in the API's grammar (ANDed with the above)")
    .option("--max <n>", `at most this many, newest first (default ${DEFAULT_EVENTS})`, Number)
    .option("--json", "one JSON object per event")
    .action(
      async (
        pipelineId: string,
        options: { type?: string; since?: string; filter?: string; max?: number; json?: boolean },
        command: Command,
      ) => {
        const types = options.type?.split(",").map((t) => `'${t.trim().replace(/'/g, "''")}'`);
        const parts = [
          ...(types ? [`event_type in (${types.join(", ")})`] : []),
          ...(options.since ? [`timestamp > '${options.since.replace(/'/g, "''")}'`] : []),
          ...(options.filter ? [options.filter] : []),
        ];
        const client = api(command);
        const max = options.max ?? DEFAULT_EVENTS;
        const filter = parts.length > 0 ? { filter: parts.join(" AND ") } : {};
        const events: Awaited<ReturnType<typeof client.events>>["events"][number][] = [];
        let pageToken: string | undefined;
        do {
          const page = await client.events(pipelineId, {
            ...(pageToken ? { page_token: pageToken } : filter),
            max_results: Math.min(max - events.length, EVENTS_PAGE),
          });
          events.push(...page.events);
          pageToken = page.next_page_token;
        } while (pageToken && events.length < max);
        // A log longer than what is shown says so, or a user takes the newest 50 for all of it.
        if (pageToken) err(`the newest ${events.length} events shown; --max <n> shows more\n`);
        if (options.json) return out(formatJsonLines(events as unknown as Record<string, unknown>[]));
        print(
          events.map((e) => ({
            timestamp: e.timestamp,
            level: e.level,
            event_type: e.event_type,
            message: e.message,
          })),
        );
      },
    );

  topCommand(program, "rewind-points")
    .option("--capture", "capture one now first")
    .option("--json", "one JSON object per point")
    .action(async (pipelineId: string, options: { capture?: boolean; json?: boolean }, command: Command) => {
      const client = api(command);
      if (options.capture) await client.captureRewindPoint(pipelineId);
      const rewind_points = await client.allRewindPoints(pipelineId);
      if (options.json) return out(formatJsonLines(rewind_points as unknown as Record<string, unknown>[]));
      print(
        rewind_points.map((p) => ({
          rewind_point_id: p.rewind_point_id,
          timestamp: p.timestamp,
          versions: p.datasets.map((d) => `${d.identifier.split(".").at(-1)}@${d.table_version}`).join(" "),
          message: p.message,
        })),
      );
    });

  topCommand(program, "state")
    .option("--checkpoint <seq>", "at this checkpoint", Number)
    .option("--point <id>", "at this rewind point (see `ebb rewind-points`)")
    .option("--max <n>", "at most this many rows (default: all)", Number)
    .option("--json", "one JSON object per row")
    .action(
      async (
        pipelineId: string,
        flow: string,
        options: { checkpoint?: number; point?: string; max?: number; json?: boolean },
        command: Command,
      ) => {
        const client = api(command);
        const rows: Record<string, unknown>[] = [];
        let query: Parameters<typeof client.flowState>[2] = {
          ...(options.checkpoint !== undefined ? { checkpoint_seq: options.checkpoint } : {}),
          ...(options.point ? { rewind_point_id: options.point } : {}),
        };
        for (;;) {
          const page = await client.flowState(pipelineId, flow, query);
          if (rows.length === 0 && !options.json)
            out(
              `checkpoint ${page.checkpoint_seq}, watermark ${page.watermark ?? "none"}, ` +
                `${page.tables.map((t) => `${t.name}: ${t.num_rows} rows`).join(", ") || "no state"}\n`,
            );
          for (const row of page.rows)
            rows.push(options.json ? row : { table: row.table, ...row.key, ...row.value });
          if (!page.next_page_token || (options.max !== undefined && rows.length >= options.max)) break;
          query = { page_token: page.next_page_token };
        }
        const shown = options.max !== undefined ? rows.slice(0, options.max) : rows;
        if (options.json) return print(shown, true);
        // One section per state table: each has its own columns (a join's two sides, say).
        for (const table of new Set(shown.map((row) => row["table"] as string))) {
          const own = shown.filter((row) => row["table"] === table).map(({ table: _, ...row }) => row);
          out(`\n${table}:\n`);
          print(own, false);
        }
      },
    );

  topCommand(program, "history")
    .option("--json", "one JSON object per commit")
    .action(async (table: string, options: { json?: boolean }, command: Command) => {
      const { history } = await api(command).history(table);
      print(
        options.json
          ? history
          : history.map((h) => ({
              version: h["version"],
              timestamp: h["timestamp"],
              operation: h["operation"],
              metrics: JSON.stringify(h["operationMetrics"]),
            })),
        options.json,
      );
    });

  topCommand(program, "changes")
    .option("--from <n>", "first version", Number)
    .option("--to <n>", "last version", Number)
    .option("--json", "one JSON object per change")
    .action(
      async (table: string, options: { from?: number; to?: number; json?: boolean }, command: Command) => {
        const { changes } = await api(command).changes(table, {
          ...(options.from !== undefined ? { starting_version: options.from } : {}),
          ...(options.to !== undefined ? { ending_version: options.to } : {}),
        });
        print(changes, options.json);
      },
    );

  topCommand(program, "query")
    .option("--version <n>", "as of this version", Number)
    .option("--timestamp <time>", "as of this time")
    .option("--limit <n>", "at most this many rows", Number)
    .option("--json", "one JSON object per row")
    .action(
      async (
        table: string,
        sql: string | undefined,
        options: { version?: number; timestamp?: string; limit?: number; json?: boolean },
        command: Command,
      ) => {
        const { rows } = await api(command).query(table, {
          ...(sql ? { sql } : {}),
          ...(options.version !== undefined ? { version: options.version } : {}),
          ...(options.timestamp ? { timestamp: options.timestamp } : {}),
          ...(options.limit ? { limit: options.limit } : {}),
        });
        print(rows, options.json);
      },
    );

  topCommand(program, "sql")
    .option("--catalog <name>", "the catalog of names with fewer parts")
    .option("--schema <name>", "the schema of names with fewer parts")
    .option("--limit <n>", "at most this many rows", Number)
    .option("--json", "one JSON object per row")
    .action(
      async (
        statement: string,
        options: { catalog?: string; schema?: string; limit?: number; json?: boolean },
        command: Command,
      ) => {
        const answer = await api(command).executeStatement({
          statement,
          ...(options.catalog ? { catalog: options.catalog } : {}),
          ...(options.schema ? { schema: options.schema } : {}),
          ...(options.limit ? { row_limit: options.limit } : {}),
        });
        if (answer.status.state !== "SUCCEEDED") {
          throw new StatementFailedError(answer.status.error?.message ?? answer.status.state);
        }
        const names = answer.manifest?.schema.columns.map((column) => column.name) ?? [];
        const rows = (answer.result?.data_array ?? []).map((values) =>
          Object.fromEntries(names.map((name, i) => [name, values[i]])),
        );
        print(rows, options.json);
        if (answer.manifest?.truncated && !options.json)
          out(`(truncated at ${rows.length} rows: raise --limit)\n`);
      },
    );

  topCommand(program, "onset")
    .option("--deletes", "look for an erroneous delete (change type delete)")
    .option("--json", "print as JSON")
    .action(
      async (
        table: string,
        predicate: string,
        options: { deletes?: boolean; json?: boolean },
        command: Command,
      ) => {
        const onset = await api(command).onset(table, {
          predicate,
          ...(options.deletes ? { change_types: ["delete"] } : {}),
        });
        if (options.json) printObject(out, onset);
        else out(onsetOutcome(table, onset));
      },
    );

  topCommand(program, "optimize")
    .option(
      "--target-size <bytes>",
      "size of the files written (default: the table's delta.targetFileSize)",
      Number,
    )
    .option("--dry-run", "print the plan, write nothing")
    .option("--json", "print as JSON")
    .action(
      async (
        table: string,
        options: { targetSize?: number; dryRun?: boolean; json?: boolean },
        command: Command,
      ) => {
        const result = await api(command).optimize(table, {
          ...(options.targetSize !== undefined ? { target_file_size_bytes: options.targetSize } : {}),
          ...(options.dryRun ? { dry_run: true } : {}),
        });
        if (options.json) printObject(out, result);
        else out(optimizeOutcome(table, result));
      },
    );
}
