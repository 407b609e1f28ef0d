import type { Command } from "commander";
import { topCommand } from "./command-catalogue.ts";
import { DeltaTable, TableNotFoundError, type HistoryEntry, type TimeTravel } from "../delta/index.ts";
import { parseTimestamp } from "../pipeline/timestamp.ts";
import { formatJsonLines, formatTable, renderCell, tableWidth, type Row } from "./output-format.ts";
import { UsageError } from "./usage-error.ts";
import { api } from "./pipeline-commands.ts";
import { PipelineTableRestoreError } from "./pipeline-table-restore.ts";
import { pipelineTableName, resolveTableLocation } from "./table-location.ts";

/**
 * `ebb table …`: read and maintain one Delta table directly (a local folder or `s3://bucket/prefix`),
 * without a running Ebb — the Delta counterparts of Spark's `SELECT … VERSION AS OF`, `DESCRIBE
 * HISTORY`, `table_changes`, `RESTORE`, `VACUUM` and `OPTIMIZE`.
 */
export function addTableCommands(program: Command, out: (text: string) => void): void {
  const table = topCommand(program, "table");
  const print = (rows: readonly Row[], json: boolean | undefined) =>
    out(json ? formatJsonLines(rows) : formatTable(rows));

  table
    .command("scan <location>")
    .description("print the table's rows, as of its latest version or an earlier one")
    .option("--version <n>", "read as of this version", parseVersion)
    .option("--timestamp <time>", "read as of this time (UTC 'yyyy-MM-dd HH:mm:ss' or ISO-8601)", parseTime)
    .option("--limit <n>", "print at most this many rows", parseCount)
    .option("--json", "one JSON object per row")
    .action(async (location: string, options: ScanOptions) => {
      const at = timeTravel(options);
      const { store, display } = resolveTableLocation(location);
      // The version asked for alone: a table handle would load the latest version first.
      const rows = await DeltaTable.scanAnswersAt(store, at).catch((error: unknown) => {
        throw namedNotFound(error, display);
      });
      print(options.limit === undefined ? rows : rows.slice(0, options.limit), options.json);
    });

  table
    .command("history <location>")
    .description("the table's commits, newest first (DESCRIBE HISTORY)")
    .option("--limit <n>", "at most this many commits", parseCount)
    .option("--json", "one JSON object per commit")
    .action(async (location: string, options: { limit?: number; json?: boolean }, command: Command) => {
      await withTable(location, async (delta) => {
        const history = await delta.history(options.limit === undefined ? {} : { limit: options.limit });
        const at = (entry: HistoryEntry) => new Date(entry.timestamp).toISOString();
        if (options.json)
          return print(
            history.map((entry) => ({ ...entry, timestamp: at(entry) })),
            true,
          );
        const rows = history.map((entry) => ({
          version: entry.version,
          timestamp: at(entry),
          operation: entry.operation ?? "",
          parameters: renderCell(entry.operationParameters),
          metrics: renderCell(entry.operationMetrics),
        }));
        out(formatTable(rows, { width: tableWidth(command), keep: ["version", "timestamp", "operation"] }));
      });
    });

  table
    .command("changes <location>")
    .description("the change data feed between two versions (table_changes)")
    .requiredOption("--from <n>", "first version, inclusive", parseVersion)
    .option("--to <n>", "last version, inclusive (default: latest)", parseVersion)
    .option("--json", "one JSON object per change row")
    .action(async (location: string, options: { from: number; to?: number; json?: boolean }) => {
      await withTable(location, async (delta) =>
        print(await delta.changes(options.from, options.to), options.json),
      );
    });

  table
    .command("restore <location>")
    .description("restore the table to an earlier version or time (one metadata-only commit)")
    .option("--version <n>", "restore to this version", parseVersion)
    .option("--timestamp <time>", "restore to the latest version at or before this time", parseTime)
    .option("--force", "restore a pipeline's table although its flows' checkpoints stay ahead of it")
    .option("--json", "print the result as JSON")
    .action(async (location: string, options: TimeTravelOptions & { force?: boolean; json?: boolean }) => {
      const to = timeTravel(options);
      if (!to) throw new UsageError("restore needs --version or --timestamp");
      const pipelineTable = pipelineTableName(location);
      if (pipelineTable !== undefined && options.force !== true)
        throw new PipelineTableRestoreError(location, pipelineTable);
      await withTable(location, async (delta) => {
        const result = await delta.restore({ to });
        print([{ version: result.version, ...result.operationMetrics }], options.json);
      });
    });

  table
    .command("vacuum <location>")
    .description(
      "delete files no longer referenced and older than the retention; a pipeline's table (by its name " +
        "catalog.schema.table, or its folder in $EBB_BUCKET) goes through the API, which keeps the files of its live rewind points",
    )
    .option("--retain-hours <h>", "retention in hours (default: the table's, 168 unless set)", parseCount)
    .option("--allow-short-retention", "allow a retention shorter than the table's setting")
    .option("--dry-run", "list what would be deleted, delete nothing")
    .option("--json", "one JSON object per file")
    .action(async (location: string, options: VacuumOptions, command: Command) => {
      const request = {
        ...(options.retainHours !== undefined ? { retentionHours: options.retainHours } : {}),
        allowShortRetention: options.allowShortRetention === true,
        dryRun: options.dryRun === true,
      };
      const status = request.dryRun ? "would delete" : "deleted";
      const name = pipelineTableName(location);
      if (name !== undefined) {
        const result = await api(command).vacuum(name, {
          ...(request.retentionHours !== undefined ? { retain_hours: request.retentionHours } : {}),
          allow_short_retention: request.allowShortRetention,
          dry_run: request.dryRun,
        });
        print(
          result.files.map((file) => ({ ...file, status })),
          options.json,
        );
        if (!options.json && result.state_files.length > 0)
          out(
            `${status} ${result.state_files.length} state file(s) of its flows that no live rewind point needs\n`,
          );
        if (!options.json && result.protected_versions.length > 0) {
          out(
            `kept ${result.files_protected} file(s) that live rewind points need (versions ${result.protected_versions.join(", ")})\n`,
          );
        }
        if (!options.json && result.notice !== undefined) out(`${result.notice}\n`);
        return;
      }
      await withTable(location, async (delta) => {
        const result = await delta.vacuum(request);
        print(
          result.filesToDelete.map((file) => ({ path: file.key, size: file.size, status })),
          options.json,
        );
      });
    });

  table
    .command("optimize <location>")
    .description("compact small files into files of the target size (one dataChange=false commit)")
    .option(
      "--target-size <bytes>",
      "size of the files written (default: the table's, 128 MiB unless set)",
      parseCount,
    )
    .option("--dry-run", "list the bins, write nothing")
    .option("--json", "one JSON object per bin")
    .action(async (location: string, options: { targetSize?: number; dryRun?: boolean; json?: boolean }) => {
      await withTable(location, async (delta) => {
        const { plan, committed } = await delta.optimize({
          ...(options.targetSize !== undefined ? { targetFileSizeBytes: options.targetSize } : {}),
          dryRun: options.dryRun === true,
        });
        const status = committed ? `compacted in version ${committed.version}` : "would compact";
        print(
          plan.bins.map((bin) => ({
            partition: JSON.stringify(bin.partitionValues),
            files: bin.files.length,
            bytes: bin.files.reduce((sum, file) => sum + file.size, 0),
            status,
          })),
          options.json,
        );
      });
    });
}

interface TimeTravelOptions {
  version?: number;
  timestamp?: number;
}
interface ScanOptions extends TimeTravelOptions {
  limit?: number;
  json?: boolean;
}
interface VacuumOptions {
  retainHours?: number;
  allowShortRetention?: boolean;
  dryRun?: boolean;
  json?: boolean;
}

async function withTable(location: string, work: (table: DeltaTable) => Promise<void>): Promise<void> {
  const { store, display } = resolveTableLocation(location);
  const table = await DeltaTable.open(store).catch((error: unknown) => {
    throw namedNotFound(error, display);
  });
  try {
    await work(table);
  } finally {
    await table.close();
  }
}

/** The table's store is rooted at its folder, so the reader cannot name it; the CLI can. */
function namedNotFound(error: unknown, display: string): unknown {
  return error instanceof TableNotFoundError ? new TableNotFoundError(display, { cause: error }) : error;
}

function timeTravel(options: TimeTravelOptions): TimeTravel | undefined {
  if (options.version !== undefined && options.timestamp !== undefined) {
    throw new UsageError("give --version or --timestamp, not both");
  }
  if (options.version !== undefined) return { version: options.version };
  if (options.timestamp !== undefined) return { timestamp: options.timestamp };
  return undefined;
}

function parseVersion(text: string): number {
  if (!/^\d+$/.test(text)) throw new UsageError(`not a table version: ${text} (a whole number from 0)`);
  return Number(text);
}

function parseCount(text: string): number {
  if (!/^\d+$/.test(text)) throw new UsageError(`not a whole number: ${text}`);
  return Number(text);
}

function parseTime(text: string): number {
  const millis = parseTimestamp(text);
  if (millis === undefined) {
    throw new UsageError(`not a timestamp: ${text} (UTC 'yyyy-MM-dd HH:mm:ss' or ISO-8601 with a zone)`);
  }
  return millis;
}
