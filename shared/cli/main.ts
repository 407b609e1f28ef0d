import { Command, CommanderError, InvalidArgumentError, Option } from "commander";
import packageJson from "../../package.json" with { type: "json" };
import { commandGroup, TOP_COMMANDS, type CommandGroup } from "./command-catalogue.ts";
import { DeclinedError } from "./declined-error.ts";
import { EXIT } from "./exit-codes.ts";
import type { Confirm } from "./update-commands.ts";
import { UsageError } from "./usage-error.ts";

export { EXIT } from "./exit-codes.ts";

export interface CliIo {
  readonly out: (text: string) => void;
  readonly err: (text: string) => void;
  /**
   * Asks a yes/no question (rewind asks before it changes anything); absent when there is no one to
   * ask, and a command that needs confirmation then refuses unless `--yes`.
   */
  readonly confirm?: Confirm;
  /** The terminal's width, which tables fit in; absent when printing to a pipe. */
  readonly width?: number;
}

const processIo: CliIo = {
  out: (text) => process.stdout.write(text),
  err: (text) => process.stderr.write(text),
  ...(process.stdin.isTTY ? { confirm: askOnTerminal } : {}),
  ...(process.stdout.isTTY ? { width: process.stdout.columns } : {}),
};

async function askOnTerminal(question: string): Promise<boolean> {
  const { createInterface } = await import("node:readline/promises");
  const prompt = createInterface({ input: process.stdin, output: process.stdout });
  try {
    return /^y(es)?$/i.test((await prompt.question(question)).trim());
  } finally {
    prompt.close();
  }
}

/**
 * Each group of commands is loaded only when a command of it runs: `ebb --help` loads commander
 * alone, `ebb table …` no API client, `ebb pipelines …` no DuckDB.
 */
const GROUPS: Record<CommandGroup, () => Promise<(program: Command, io: CliIo) => void>> = {
  pipelines: async () => {
    const { addPipelineCommands } = await import("./pipeline-commands.ts");
    return (program, io) => addPipelineCommands(program, io.out, io.err);
  },
  updates: async () => {
    const [{ addUpdateCommands }, { addBranchCommands }] = await Promise.all([
      import("./update-commands.ts"),
      import("./branch-commands.ts"),
    ]);
    return (program, io) => {
      addUpdateCommands(program, io.out, io.confirm);
      addBranchCommands(program, io.out);
    };
  },
  inspect: async () => {
    const { addInspectCommands } = await import("./inspect-commands.ts");
    return (program, io) => addInspectCommands(program, io.out, io.err);
  },
  table: async () => {
    const { addTableCommands } = await import("./table-commands.ts");
    return (program, io) => addTableCommands(program, io.out);
  },
  mcp: async () => {
    const { addMcpCommand } = await import("./mcp-command.ts");
    return (program) => addMcpCommand(program);
  },
};

/** Runs `ebb` with `argv` (without the node and script entries) and returns the exit code. */
export async function runCli(argv: readonly string[], io: CliIo = processIo): Promise<number> {
  const program = new Command("ebb")
    .description("Ebb: declarative data pipelines with rewind and replay over Delta Lake tables")
    .exitOverride()
    .configureOutput({ writeOut: io.out, writeErr: io.err })
    .option("--endpoint <url>", "the Ebb API (default: $EBB_ENDPOINT)")
    .option("--token <token>", "bearer token of the local runtime (default: $EBB_TOKEN; without one, SigV4)")
    .addOption(
      new Option("--width <columns>", "fit tables in this many columns")
        .default(io.width, "the terminal's")
        .argParser(parseWidth),
    );
  try {
    const group = commandGroup(argv);
    if (group) (await GROUPS[group]())(program, io);
    else {
      // Only without a command: `table scan --version <n>` is the table's version.
      program.version(packageJson.version, "-V, --version", "print the version of ebb");
      listCommands(program);
    }
    await program.parseAsync([...argv], { from: "user" });
    return EXIT.ok;
  } catch (error) {
    return report(error, io);
  }
}

function parseWidth(text: string): number {
  if (!/^\d+$/.test(text) || Number(text) < 20) throw new InvalidArgumentError("a whole number from 20");
  return Number(text);
}

/** Every top-level command, by usage and summary only: what `ebb --help` (or a typo) needs. */
function listCommands(program: Command): void {
  for (const { usage, summary } of Object.values(TOP_COMMANDS)) program.command(usage).description(summary);
}

async function report(error: unknown, io: CliIo): Promise<number> {
  if (error instanceof CommanderError) {
    // Commander has printed its own message (or the help, for --help / --version).
    if (error.exitCode === EXIT.updateFailed) return EXIT.updateFailed;
    return error.exitCode === 0 ? EXIT.ok : EXIT.usage;
  }
  if (error instanceof UsageError) {
    io.err(`ebb: ${error.message}\n`);
    return EXIT.usage;
  }
  if (error instanceof DeclinedError) {
    io.err(`ebb: ${error.message}\n`);
    return EXIT.failed;
  }
  // The error classes of the commands' modules, loaded (if not yet) only when something failed.
  const [
    { EbbApiError },
    { EndpointUnreachableError },
    { StatementFailedError },
    { CodedError },
    { PipelineTableRestoreError },
  ] = await Promise.all([
    import("../client/ebb-client.ts"),
    import("../client/endpoint-unreachable-error.ts"),
    import("./statement-failed-error.ts"),
    import("../errors/coded-error.ts"),
    import("./pipeline-table-restore.ts"),
  ]);
  if (error instanceof EbbApiError) {
    io.err(`ebb: ${error.errorCode} (HTTP ${error.status}): ${error.message}\n`);
    return EXIT.refused;
  }
  if (error instanceof EndpointUnreachableError) {
    io.err(`ebb: ${error.message}\n`);
    return EXIT.failed;
  }
  if (error instanceof StatementFailedError) {
    io.err(`ebb: the statement failed: ${error.message}\n`);
    return EXIT.refused;
  }
  if (error instanceof PipelineTableRestoreError) {
    io.err(`ebb: ${error.errorCode}: ${error.message}\n`);
    return EXIT.failed;
  }
  // Ebb's own errors (a Delta table's, the store's) name the object and the way out: no stack.
  if (error instanceof CodedError) {
    io.err(`ebb: ${error.message}\n`);
    return EXIT.failed;
  }
  io.err(`ebb: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  return EXIT.failed;
}
