import { appendFileSync, mkdirSync } from "node:fs";
import path from "node:path";
import { routeLogsTo } from "../../functions/runtime/ebb-logger.ts";

/**
 * Where the local runtime's log goes: the JSON lines the functions write on Lambda (one per request,
 * one per task), appended to a file in the data folder and, with `--verbose`, echoed on the console.
 * Appended synchronously: one process, a line per request, and a line is on disk before its answer.
 * A line the file refuses (its disk full) goes to stderr instead, and the next line tries the file again: the log must never fail the
 * request or task it describes (a throwing sink turned every request into a 500 on a full disk).
 */
export interface LocalLogOptions {
  /** The log file, created with its folder; owner-only like the rest of the data folder. */
  readonly file?: string;
  /** Every line on the console as well. @default false */
  readonly console?: boolean;
}

/** The file `npm start` keeps its log in, inside the data folder. */
export function localLogFile(dataDir: string): string {
  return path.join(dataDir, "logs", "ebb.log");
}

/** Routes the functions' log lines as asked; the returned function restores stdout. */
export function routeLocalLog(options: LocalLogOptions): () => void {
  const { file } = options;
  if (file !== undefined) mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  let refusing = false;
  routeLogsTo((line) => {
    if (options.console) console.log(line);
    if (file === undefined) return;
    try {
      appendFileSync(file, line + "\n", { mode: 0o600 });
      refusing = false;
    } catch (error) {
      if (!refusing)
        console.error(`the log file ${file} cannot be written (${describe(error)}): its lines go to stderr`);
      refusing = true;
      if (!options.console) console.error(line);
    }
  });
  return () => routeLogsTo(undefined);
}

function describe(error: unknown): string {
  return (error as NodeJS.ErrnoException).code ?? String(error);
}
