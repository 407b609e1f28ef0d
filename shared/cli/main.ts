import { Command, CommanderError } from "commander";
import { DeltaError } from "../delta/errors.ts";
import { StoreError } from "../store/errors.ts";
import { addTableCommands } from "./table-commands.ts";
import { UsageError } from "./usage-error.ts";

/** Exit codes scripts can rely on. */
export const EXIT = { ok: 0, failed: 1, usage: 2 } as const;

export interface CliIo {
  readonly out: (text: string) => void;
  readonly err: (text: string) => void;
}

const processIo: CliIo = {
  out: (text) => process.stdout.write(text),
  err: (text) => process.stderr.write(text),
};

/** Runs `ebb` with `argv` (without the node and script entries) and returns the exit code. */
export async function runCli(argv: readonly string[], io: CliIo = processIo): Promise<number> {
  const program = new Command("ebb")
    .description("Ebb: declarative data pipelines with rewind and replay over Delta Lake tables")
    .exitOverride()
    .configureOutput({ writeOut: io.out, writeErr: io.err });
  addTableCommands(program, io.out);
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
    return error.exitCode === 0 ? EXIT.ok : EXIT.usage;
  }
  if (error instanceof UsageError) {
    io.err(`ebb: ${error.message}\n`);
    return EXIT.usage;
  }
  if (error instanceof DeltaError || error instanceof StoreError) {
    io.err(`ebb: ${error.message}\n`);
    return EXIT.failed;
  }
  io.err(`ebb: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  return EXIT.failed;
}
