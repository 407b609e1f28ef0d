import { appendFileSync, mkdirSync } from "node:fs";
import path from "node:path";
import { routeLogsTo } from "../../functions/runtime/ebb-logger.ts";

/**
 * Where the local runtime's log goes: the JSON lines the functions write on Lambda (one per request,
 * one per task), appended to a file in the data folder and, with `--verbose`, echoed on the console.
 * Appended synchronously: one process, a line per request, and a line is on disk before its answer.
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
  routeLogsTo((line) => {
    if (file !== undefined) appendFileSync(file, line + "\n", { mode: 0o600 });
    if (options.console) console.log(line);
  });
  return () => routeLogsTo(undefined);
}
