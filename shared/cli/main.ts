import { Command, CommanderError } from "commander";
import { DeltaError } from "../delta/index.ts";
import { StoreError } from "../store/errors.ts";
import { EbbApiError } from "../client/ebb-client.ts";
import { addInspectCommands, StatementFailedError } from "./inspect-commands.ts";
import { addPipelineCommands } from "./pipeline-commands.ts";
import { PipelineTableRestoreError } from "./pipeline-table-restore.ts";
import { addTableCommands } from "./table-commands.ts";
import { addUpdateCommands, EXIT_UPDATE_FAILED, type Confirm } from "./update-commands.ts";
import { UsageError } from "./usage-error.ts";

/**
 * Exit codes scripts can rely on: 3 when the API refused the request (its error_code is printed),
 * 4 when an update it followed ended FAILED or CANCELED.
 */
export const EXIT = { ok: 0, failed: 1, usage: 2, refused: 3, updateFailed: EXIT_UPDATE_FAILED } as const;

export interface CliIo {
  readonly out: (text: string) => void;
  readonly err: (text: string) => void;
  /** Asks a yes/no question (rewind asks before it changes anything). @default no: refuse */
  readonly confirm?: Confirm;
}

const processIo: CliIo = {
  out: (text) => process.stdout.write(text),
  err: (text) => process.stderr.write(text),
  confirm: async (question) => {
    if (!process.stdin.isTTY) return false;
    const { createInterface } = await import("node:readline/promises");
    const prompt = createInterface({ input: process.stdin, output: process.stdout });
    try {
      return /^y(es)?$/i.test((await prompt.question(question)).trim());
    } finally {
      prompt.close();
    }
  },
};

/** Runs `ebb` with `argv` (without the node and script entries) and returns the exit code. */
export async function runCli(argv: readonly string[], io: CliIo = processIo): Promise<number> {
  const program = new Command("ebb")
    .description("Ebb: declarative data pipelines with rewind and replay over Delta Lake tables")
    .exitOverride()
    .configureOutput({ writeOut: io.out, writeErr: io.err })
    .option("--endpoint <url>", "the Ebb API (default: $EBB_ENDPOINT)")
    .option("--token <token>", "bearer token of the local runtime (default: $EBB_TOKEN; without one, SigV4)");
  addTableCommands(program, io.out);
  addPipelineCommands(program, io.out);
  addUpdateCommands(program, io.out, io.confirm ?? (async () => false));
  addInspectCommands(program, io.out);
  try {
    await program.parseAsync([...argv], { from: "user" });
    return EXIT.ok;
  } catch (error) {
    return report(error, io);
  }
}

function report(error: unknown, io: CliIo): number {
  if (error instanceof CommanderError) {
    // Commander has printed its own message (or the help, for --help / --version).
    if (error.exitCode === EXIT.updateFailed) return EXIT.updateFailed;
    return error.exitCode === 0 ? EXIT.ok : EXIT.usage;
  }
  if (error instanceof UsageError) {
    io.err(`ebb: ${error.message}\n`);
    return EXIT.usage;
  }
  if (error instanceof EbbApiError) {
    io.err(`ebb: ${error.errorCode} (HTTP ${error.status}): ${error.message}\n`);
    return EXIT.refused;
  }
  if (error instanceof StatementFailedError) {
    io.err(`ebb: the statement failed: ${error.message}\n`);
    return EXIT.refused;
  }
  if (error instanceof PipelineTableRestoreError) {
    io.err(`ebb: ${error.errorCode}: ${error.message}\n`);
    return EXIT.failed;
  }
  if (error instanceof DeltaError || error instanceof StoreError) {
    io.err(`ebb: ${error.message}\n`);
    return EXIT.failed;
  }
  io.err(`ebb: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  return EXIT.failed;
}
