import type { Command } from "commander";
import { topCommand } from "./command-catalogue.ts";
import type { EbbClient, FlowProgress, UpdateInfo } from "../client/ebb-client.ts";
import { api, printObject, type Out } from "./pipeline-commands.ts";
import { formatJsonLines, formatTable } from "./output-format.ts";
import { printRewindOutcome } from "./rewind-outcome.ts";
import { DeclinedError } from "./declined-error.ts";
import { EXIT } from "./exit-codes.ts";
import { UsageError } from "./usage-error.ts";
import { addRewindCutCommand } from "./rewind-cut-command.ts";
import { runInOrder } from "./ordered-run-command.ts";

/**
 * `ebb run`, `ebb rewind`, `ebb updates get|list`: start updates and follow them. `run` and `rewind`
 * wait for the update to end, showing its state and per-flow rows as they change, unless
 * `--no-wait`; an update that ends FAILED or CANCELED is exit code 4.
 */

interface WaitOptions {
  wait: boolean;
  json?: boolean;
}

export interface Confirm {
  (question: string): Promise<boolean>;
}

/** `confirm` is absent when there is no one to ask: a rewind then needs `--yes` (or `--dry-run`). */
export function addUpdateCommands(program: Command, out: Out, confirm: Confirm | undefined): void {
  topCommand(program, "run")
    .option("--refresh <mode>", "INCREMENTAL, FULL or RESET")
    .option("--full-refresh", "refresh FULL everything")
    .option("--select <names>", "datasets or flows the refresh applies to (comma-separated)", list)
    .option("--reset-mode <mode>", "DROP or TRUNCATE (with --refresh FULL or RESET)")
    .option("--reset-checkpoints <flows>", "reset these flows' checkpoints only (comma-separated)", list)
    .option("--validate-only", "plan and validate only")
    .option(
      "--pipelines <ids>",
      "run these pipelines one after another, upstreams first (comma-separated; instead of <pipeline-id>)",
      list,
    )
    .option("--dry-run", "with --pipelines: print the order, start nothing")
    .option("--engine <engine>", "run every batch of this update on duckdb or spark (a replay on Spark)")
    .option("--branch <name>", "run on this branch of the pipeline (its tables and checkpoints), not live")
    .option("--no-wait", "print the update id and return")
    .option("--json", "print the final update as JSON")
    .action(async (pipelineId: string | undefined, options: RunOptions, command: Command) => {
      if (options.pipelines && options.branch !== undefined)
        throw new UsageError("--branch runs one pipeline's branch: give its <pipeline-id>, not --pipelines");
      if (options.pipelines) {
        if (
          pipelineId !== undefined ||
          options.refresh ||
          options.select ||
          options.resetMode ||
          options.resetCheckpoints ||
          options.validateOnly
        )
          throw new UsageError(
            "--pipelines takes no <pipeline-id> and, of the refresh options, only --full-refresh",
          );
        return runInOrder(api(command), options.pipelines, options, out, command);
      }
      if (pipelineId === undefined) throw new UsageError("give a <pipeline-id>, or --pipelines a,b,c");
      if (options.dryRun)
        throw new UsageError("--dry-run goes with --pipelines (for one pipeline, --validate-only)");
      const body = {
        cause: "USER_ACTION",
        ...(options.refresh ? { refresh: options.refresh } : {}),
        ...(options.fullRefresh ? { full_refresh: true } : {}),
        ...(options.select ? { selection: options.select } : {}),
        ...(options.resetMode ? { reset_mode: options.resetMode } : {}),
        ...(options.resetCheckpoints ? { reset_checkpoint_selection: options.resetCheckpoints } : {}),
        ...(options.validateOnly ? { validate_only: true } : {}),
        ...(options.engine ? { engine: options.engine } : {}),
        ...(options.branch !== undefined ? { branch: options.branch } : {}),
      };
      await startAndFollow(api(command), pipelineId, body, options, out, command);
    });

  addRewindCutCommand(program, out, confirm);

  topCommand(program, "rewind")
    .option("--point <id>", "a rewind point id (see `ebb rewind-points`)")
    .option("--latest", "the newest rewind point")
    .option("--yesterday", "the newest rewind point at least 24 hours old")
    .option("--timestamp <time>", "UTC 'yyyy-MM-dd HH:mm:ss' or ISO-8601")
    .option("--datasets <names>", "catalog.schema.table identifiers (comma-separated); default all", list)
    .option("--no-cascade", "do not also rewind what is downstream of the datasets")
    .option("--no-reset-checkpoints", "restore table data only; flows keep their position")
    .option("--dry-run", "validate and record the point, change nothing")
    .option("--branch <name>", "make a branch of the pipeline at the point instead; live is not changed")
    .option("--yes", "do not ask for confirmation (needed without a terminal)")
    .option("--stop", "stop the running update first (a continuous pipeline runs until stopped)")
    .option("--no-wait", "print the update id and return")
    .option("--json", "print the final update as JSON")
    .action(async (pipelineId: string, options: RewindOptions, command: Command) => {
      if (options.branch !== undefined) {
        // A branch changes nothing of live: no confirmation (docs/branches.md).
        const client = api(command);
        const target = await rewindTarget(client, pipelineId, options);
        const { branch } = await client.createBranch(pipelineId, options.branch, {
          ...target,
          ...datasetSelection(options),
        });
        if (options.json) return out(`${JSON.stringify(branch)}\n`);
        out(`branch ${branch.name} of ${pipelineId} at ${branch.point_timestamp}\n`);
        out(
          formatTable(branch.tables.map((t) => ({ table: t.name, from: t.from, version: t.source_version }))),
        );
        return;
      }
      const asks = !options.dryRun && !options.yes;
      if (asks && !confirm)
        throw new UsageError(
          `a rewind changes ${pipelineId}'s tables and there is no terminal to confirm it: pass --yes (or --dry-run to see what it would restore)`,
        );
      const client = api(command);
      if (options.stop) await client.stopPipeline(pipelineId);
      const target = await rewindTarget(client, pipelineId, options);
      const rewind_spec = {
        ...target,
        ...datasetSelection(options),
        dry_run: options.dryRun ?? false,
      };
      if (asks && confirm) {
        const points = await client.allRewindPoints(pipelineId);
        const point =
          "rewind_point_id" in target
            ? points.find((p) => p.rewind_point_id === target.rewind_point_id)
            : undefined;
        out(
          `rewind ${pipelineId} to ${point ? `point ${point.rewind_point_id} (${point.timestamp})` : JSON.stringify(target)}\n`,
        );
        if (point)
          out(
            formatTable(
              point.datasets.map((d) => ({ dataset: d.identifier, restores_version: d.table_version })),
            ),
          );
        out(
          `datasets: ${options.datasets?.join(", ") ?? "all"}; cascade ${options.cascade}; reset checkpoints ${options.resetCheckpoints}\n`,
        );
        if (!(await confirm("Rewind? [y/N] "))) throw new DeclinedError("not rewound");
      }
      const update = await startAndFollow(
        client,
        pipelineId,
        { cause: "USER_ACTION", rewind_spec },
        options,
        out,
        command,
      );
      if (update && !options.json) await printRewindOutcome(client, pipelineId, update, out);
    });

  const updates = topCommand(program, "updates");
  updates
    .command("get <pipeline-id> <update-id>")
    .option("--json", "print as JSON")
    .action(async (pipelineId: string, updateId: string, options: { json?: boolean }, command: Command) => {
      printObject(out, (await api(command).getUpdate(pipelineId, updateId)).update, options.json);
    });
  updates
    .command("list <pipeline-id>")
    .option("--max <n>", "at most this many", Number)
    .option("--json", "one JSON object per update")
    .action(async (pipelineId: string, options: { max?: number; json?: boolean }, command: Command) => {
      const { updates: listed } = await api(command).listUpdates(
        pipelineId,
        options.max ? { max_results: options.max } : {},
      );
      const rows = listed.map((u) => ({
        update_id: u.update_id,
        state: u.state,
        cause: u.cause,
        created: new Date(u.creation_time).toISOString(),
        rewind: u.rewind_spec ? "yes" : "",
        error: u.error?.error_code ?? "",
      }));
      out(options.json ? formatJsonLines(listed) : formatTable(rows));
    });
}

interface RunOptions extends WaitOptions {
  refresh?: string;
  fullRefresh?: boolean;
  select?: string[];
  resetMode?: string;
  resetCheckpoints?: string[];
  validateOnly?: boolean;
  pipelines?: string[];
  dryRun?: boolean;
  engine?: string;
  branch?: string;
}

interface RewindOptions extends WaitOptions {
  point?: string;
  latest?: boolean;
  yesterday?: boolean;
  timestamp?: string;
  datasets?: string[];
  cascade: boolean;
  resetCheckpoints: boolean;
  dryRun?: boolean;
  branch?: string;
  yes?: boolean;
  stop?: boolean;
}

function list(value: string): string[] {
  return value
    .split(",")
    .map((part) => part.trim())
    .filter(Boolean);
}

async function rewindTarget(client: EbbClient, pipelineId: string, options: RewindOptions) {
  const chosen = [options.point, options.latest, options.yesterday, options.timestamp].filter(
    (v) => v !== undefined,
  );
  if (chosen.length !== 1)
    throw new UsageError("give exactly one of --point, --latest, --yesterday, --timestamp");
  if (options.point) return { rewind_point_id: options.point };
  if (options.timestamp) return { rewind_timestamp: options.timestamp };
  const points = await client.allRewindPoints(pipelineId);
  const cutoff = options.yesterday ? Date.now() - 86_400_000 : Infinity;
  const point = points.find((p) => Date.parse(p.timestamp) <= cutoff);
  if (!point)
    throw new UsageError(
      `the pipeline has no rewind point${options.yesterday ? " from 24 hours ago or earlier" : ""}`,
    );
  return { rewind_point_id: point.rewind_point_id };
}

async function startAndFollow(
  client: EbbClient,
  pipelineId: string,
  body: unknown,
  options: WaitOptions,
  out: Out,
  command: Command,
): Promise<UpdateInfo | undefined> {
  const { update_id } = await client.startUpdate(pipelineId, body);
  return followUpdate(client, pipelineId, update_id, options, out, command);
}

/** Waits for an update (its state and flows' rows as they change) unless `--no-wait`; exit 4 unless COMPLETED. */
export async function followUpdate(
  client: EbbClient,
  pipelineId: string,
  update_id: string,
  options: WaitOptions,
  out: Out,
  command: Command,
): Promise<UpdateInfo | undefined> {
  if (!options.wait) {
    out(options.json ? `${JSON.stringify({ update_id })}\n` : `${update_id}\n`);
    return undefined;
  }
  let last = "";
  const update: UpdateInfo = await client.waitForUpdate(pipelineId, update_id, {
    intervalMs: 500,
    onPoll: (polled) => {
      const flows = Object.entries(polled.progress ?? {})
        .map(([flow, p]) =>
          p.refresh !== undefined
            ? `${flow} ${p.rows_out} rows (${REFRESH_WORDS[p.refresh] ?? p.refresh})`
            : `${flow} ${p.rows_out} rows/${p.batches} batches${p.state ? ` (${stateLine(p.state)})` : ""}`,
        )
        .join(", ");
      const line = `${update_id} ${polled.state}${flows ? `  ${flows}` : ""}`;
      if (line !== last && !options.json) out(`${line}\n`);
      last = line;
    },
  });
  if (options.json) out(`${JSON.stringify(update, null, 2)}\n`);
  else if (update.error) out(`error ${update.error.error_code}: ${update.error.message}\n`);
  if (update.state !== "COMPLETED")
    command.error(`update ${update_id} ended ${update.state}`, { exitCode: EXIT.updateFailed });
  return update;
}

/** How a materialized view refreshed, as the progress line says it. */
const REFRESH_WORDS: Readonly<Record<string, string>> = {
  INCREMENTAL: "incremental refresh",
  FULL_RECOMPUTE: "full recompute",
};

/**
 * A stateful flow's operators in the live progress line, as Spark's `stateOperators` read: the
 * state and what the watermark dropped, then each operator's own figures, then the watermark. A
 * server that does not name the operators gets the figures it sends.
 */
function stateLine(state: NonNullable<FlowProgress["state"]>): string {
  const runs = (...names: string[]) =>
    state.operator_names === undefined || names.some((name) => state.operator_names!.includes(name));
  const parts = [
    `state ${state.num_rows_total} rows, ${state.state_bytes} bytes`,
    `${state.num_rows_dropped_by_watermark} late dropped`,
  ];
  if (runs("dedupe", "dedupeWithinWatermark"))
    parts.push(`${state.num_duplicates_dropped} duplicates dropped`);
  if (runs("stateStoreSave") && state.num_windows_emitted !== undefined)
    parts.push(`${state.num_windows_emitted} windows emitted`);
  if (runs("symmetricHashJoin") && state.num_joined_rows !== undefined)
    parts.push(`${state.num_joined_rows} joined rows`);
  // Only a left outer join counts the rows it let go unmatched.
  if (runs("symmetricHashJoin") && state.num_left_outer_rows !== undefined)
    parts.push(`${state.num_left_outer_rows} left outer rows`);
  parts.push(`watermark ${state.watermark ?? "none"}`);
  return parts.join(", ");
}

/** The rewind's `datasets` from `--datasets`, `--cascade` and `--reset-checkpoints` (all of them when absent). */
function datasetSelection(options: RewindOptions) {
  return options.datasets
    ? {
        datasets: options.datasets.map((identifier) => ({
          identifier,
          cascade: options.cascade,
          reset_checkpoints: options.resetCheckpoints,
        })),
      }
    : {};
}
