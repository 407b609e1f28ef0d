import { describeInterval, parseInterval } from "../pipeline/duration.ts";

/**
 * What one user statement may take (pipeline SQL, a view, the query endpoint, the onset predicate):
 * wall time, memory and spill space. The runtime's operator sets them in its environment, read once:
 *
 *   EBB_SQL_TIMEOUT       a duration (`10 minutes`, `30 seconds`)   default 10 minutes
 *   EBB_SQL_MEMORY_LIMIT  DuckDB's memory_limit (`1GB`, `512MB`)    default 1GB
 *   EBB_SQL_TEMP_LIMIT    DuckDB's max_temp_directory_size         default 256MB
 *
 * The defaults fit the stack's heavy functions (2 GB of memory, Lambda's 512 MB of `/tmp`, 15 min).
 */
export interface SqlLimits {
  readonly timeoutMs: number;
  readonly memoryLimit: string;
  readonly tempLimit: string;
}

export const SQL_LIMIT_VARIABLES = {
  timeout: "EBB_SQL_TIMEOUT",
  memory: "EBB_SQL_MEMORY_LIMIT",
  temp: "EBB_SQL_TEMP_LIMIT",
} as const;

export const DEFAULT_SQL_LIMITS: SqlLimits = {
  timeoutMs: 10 * 60_000,
  memoryLimit: "1GB",
  tempLimit: "256MB",
};

const SIZE = /^\s*\d+(?:\.\d+)?\s*(?:B|KB|MB|GB|TB|KiB|MiB|GiB|TiB)\s*$/i;

/** The limits the environment sets, each variable checked; a value that is not one fails loudly. */
export function sqlLimitsFromEnv(env: NodeJS.ProcessEnv = process.env): SqlLimits {
  const timeoutText = env[SQL_LIMIT_VARIABLES.timeout];
  const timeoutMs = timeoutText === undefined ? DEFAULT_SQL_LIMITS.timeoutMs : parseInterval(timeoutText);
  if (timeoutMs === undefined || timeoutMs <= 0) {
    throw new TypeError(
      `${SQL_LIMIT_VARIABLES.timeout} must be a duration such as "10 minutes", not ${JSON.stringify(timeoutText)}`,
    );
  }
  const size = (name: string, fallback: string): string => {
    const value = env[name];
    if (value === undefined) return fallback;
    if (!SIZE.test(value))
      throw new TypeError(`${name} must be a size such as "1GB", not ${JSON.stringify(value)}`);
    return value.trim();
  };
  return {
    timeoutMs,
    memoryLimit: size(SQL_LIMIT_VARIABLES.memory, DEFAULT_SQL_LIMITS.memoryLimit),
    tempLimit: size(SQL_LIMIT_VARIABLES.temp, DEFAULT_SQL_LIMITS.tempLimit),
  };
}

/** `600000` → `10 minutes`, for messages. */
export function describeTimeout(limits: SqlLimits): string {
  return describeInterval(limits.timeoutMs);
}
