import type { Command } from "commander";

/**
 * Every top-level `ebb` command: its usage, the line `ebb --help` shows, and the module that defines
 * it in full (its group). `ebb --help` lists them from here without loading any module, and a command
 * loads only its own group (the API client, DuckDB, the AWS SDK load with the commands that need them).
 */

export type CommandGroup = "pipelines" | "updates" | "inspect" | "table" | "mcp";

interface TopCommand {
  readonly usage: string;
  readonly summary: string;
  readonly group: CommandGroup;
}

export const TOP_COMMANDS = {
  pipelines: {
    usage: "pipelines",
    summary: "create, list, read, edit and delete pipelines",
    group: "pipelines",
  },
  deploy: {
    usage: "deploy",
    summary:
      "create or edit the pipeline of a Spark Declarative Pipelines project (spark-pipeline.yml and its SQL files)",
    group: "pipelines",
  },
  run: {
    usage: "run [pipeline-id]",
    summary:
      "start an update (replay after a rewind is just this); --pipelines runs several, upstreams first",
    group: "updates",
  },
  rewind: {
    usage: "rewind <pipeline-id>",
    summary: "rewind the pipeline to a rewind point or a time (then `ebb run` replays)",
    group: "updates",
  },
  "rewind-cut": {
    usage: "rewind-cut",
    summary:
      "rewind several pipelines that read each other to one cut (then `ebb run --pipelines` replays them in order)",
    group: "updates",
  },
  stop: {
    usage: "stop <pipeline-id>",
    summary: "stop the running update (it ends CANCELED)",
    group: "pipelines",
  },
  updates: { usage: "updates", summary: "read updates", group: "updates" },
  "rewind-points": {
    usage: "rewind-points <pipeline-id>",
    summary: "the live rewind points, newest first",
    group: "inspect",
  },
  events: { usage: "events <pipeline-id>", summary: "the event log, newest first", group: "inspect" },
  state: {
    usage: "state <pipeline-id> <flow>",
    summary: "a flow's operator state as rows: at HEAD, a checkpoint, or what a rewind to a point restores",
    group: "inspect",
  },
  history: {
    usage: "history <table>",
    summary: "DESCRIBE HISTORY of catalog.schema.table",
    group: "inspect",
  },
  changes: {
    usage: "changes <table>",
    summary: "the change data feed of catalog.schema.table",
    group: "inspect",
  },
  query: {
    usage: "query <table> [sql]",
    summary: "read catalog.schema.table (as `t`), now or as of a version or time",
    group: "inspect",
  },
  sql: {
    usage: "sql <statement>",
    summary:
      "run a Databricks SQL query: event_log('<pipeline-id>'), table_changes, DESCRIBE HISTORY, catalog.schema.table",
    group: "inspect",
  },
  onset: {
    usage: "onset <table> <predicate>",
    summary: "the first version whose changes match the predicate, and the midpoint rewind timestamp",
    group: "inspect",
  },
  optimize: {
    usage: "optimize <table>",
    summary: "compact the table's small files (OPTIMIZE: one dataChange=false commit)",
    group: "inspect",
  },
  branch: {
    usage: "branch",
    summary:
      "list, compare with live, publish or discard a pipeline's branches (make one: ebb rewind --branch)",
    group: "updates",
  },
  table: { usage: "table", summary: "read and maintain a Delta table directly", group: "table" },
  mcp: { usage: "mcp", summary: "serve Ebb's tools to an AI assistant over MCP (stdio)", group: "mcp" },
} as const satisfies Record<string, TopCommand>;

export type TopCommandName = keyof typeof TOP_COMMANDS;

/** Adds the top-level command `name` with its usage and summary; its module adds the rest. */
export function topCommand(program: Command, name: TopCommandName): Command {
  const { usage, summary } = TOP_COMMANDS[name];
  return program.command(usage).description(summary);
}

/** The group of the command `argv` runs (`ebb [options] <command> …`, `ebb help <command>`), if any. */
export function commandGroup(argv: readonly string[]): CommandGroup | undefined {
  const words = commandWords(argv);
  const name = words[0] === "help" ? words[1] : words[0];
  return name !== undefined && Object.hasOwn(TOP_COMMANDS, name)
    ? TOP_COMMANDS[name as TopCommandName].group
    : undefined;
}

/** The global options that take a value: the word after them is not a command. */
const VALUED_OPTIONS = new Set(["--endpoint", "--token", "--width"]);

function commandWords(argv: readonly string[]): string[] {
  const words: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (VALUED_OPTIONS.has(arg)) i++;
    else if (!arg.startsWith("-")) words.push(arg);
    if (words.length === 2) break;
  }
  return words;
}
