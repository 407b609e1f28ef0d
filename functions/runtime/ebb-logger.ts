import { Logger } from "@aws-lambda-powertools/logger";

/**
 * Ebb's one logger (Powertools Logger): JSON lines, level from the environment (`POWERTOOLS_LOG_LEVEL`,
 * else Lambda's log level, else INFO). On Lambda a line goes to stdout, where CloudWatch Logs keeps it;
 * the local runtime, which plays every function in one process, routes the lines to its own sink (a
 * file in the data folder, and the console with `--verbose`). Only ids, names, statuses, durations and
 * error codes are logged: never a secret, a request body or a row.
 */

/** Where the local runtime wants each JSON line; unset on Lambda. */
export type LogSink = (line: string) => void;

let sink: LogSink | undefined;

/** The local runtime's hook: every line to `next` instead of stdout (undefined restores stdout). */
export function routeLogsTo(next: LogSink | undefined): void {
  sink = next;
}

/** A line of Ebb's own (an embedded-metric-format line), where the log's lines go. */
export function writeLogLine(line: string): void {
  if (sink === undefined) process.stdout.write(line + "\n");
  else sink(line);
}

class RoutableLogger extends Logger {
  protected override printLog(...args: Parameters<Logger["printLog"]>): void {
    if (sink === undefined) return super.printLog(...args);
    const [, log] = args;
    log.prepareForPrint();
    sink(JSON.stringify(log.getAttributes()));
  }
}

export const logger = new RoutableLogger({ serviceName: "ebb" });
