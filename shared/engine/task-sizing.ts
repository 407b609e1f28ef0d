import { parseByteSize } from "../pipeline/byte-size.ts";
import { SQL_LIMIT_VARIABLES } from "./sql-limits.ts";

/**
 * What the functions that run flows may hold, and what follows from it: the per-statement SQL
 * limits (sql-limits.ts) and the bytes a micro-batch takes by default. The stack sets each task
 * function's memory, timeout and temporary space (`EbbProps`) and hands the derived limits to it
 * in its environment (`taskEnvironment`); the engine reads the batch bound back once
 * (`batchBytesFromEnv`).
 *
 * Why these shares: a batch's input files are copied to the temporary folder, its output is written
 * there before upload, and DuckDB spills there past its memory limit; JSON expands several times
 * in memory. A batch of a quarter of the temporary space (an eighth of memory) leaves room for all
 * three (measured: README "How big a batch is").
 */

export interface TaskSize {
  /** Lambda's memory, MB (128 to 10,240). */
  readonly memoryMb: number;
  /** Lambda's `/tmp`, MB (512 to 10,240). */
  readonly ephemeralStorageMb: number;
  /** Lambda's timeout, seconds (1 to 900). */
  readonly timeoutSeconds: number;
}

/** Lambda's defaults for `/tmp`, Ebb's for memory and time (its 15-minute maximum). */
export const DEFAULT_TASK_SIZE: TaskSize = { memoryMb: 2048, ephemeralStorageMb: 512, timeoutSeconds: 900 };

/** What Lambda allows (Lambda quotas). */
export const TASK_SIZE_RANGE = {
  memoryMb: { min: 128, max: 10_240 },
  ephemeralStorageMb: { min: 512, max: 10_240 },
  timeoutSeconds: { min: 60, max: 900 },
} as const;

/** The environment variable that sets a batch's default byte bound. */
export const BATCH_BYTES_VARIABLE = "EBB_BATCH_MAX_BYTES";

const MB = 1024 ** 2;

/** Problems with `size`, each naming the prop and the range Lambda allows (empty: valid). */
export function taskSizeIssues(size: TaskSize): string[] {
  const props = {
    memoryMb: "taskMemorySize",
    ephemeralStorageMb: "taskEphemeralStorageSize",
    timeoutSeconds: "taskTimeout",
  } as const;
  const units = { memoryMb: "MB", ephemeralStorageMb: "MB", timeoutSeconds: "seconds" } as const;
  return (Object.keys(TASK_SIZE_RANGE) as (keyof TaskSize)[]).flatMap((key) => {
    const { min, max } = TASK_SIZE_RANGE[key];
    const value = size[key];
    return Number.isInteger(value) && value >= min && value <= max
      ? []
      : [
          `${props[key]} must be a whole number from ${min} to ${max} ${units[key]} (Lambda's range), not ${value}`,
        ];
  });
}

/** The byte bound of a batch on a function of `size` (see the file comment). */
export function batchBytesFor(size: TaskSize): number {
  return Math.min(size.ephemeralStorageMb / 4, size.memoryMb / 8) * MB;
}

/**
 * The environment a task function of `size` runs with: a statement may use half the memory and half
 * the temporary space, and two thirds of the time (the rest is the batch's reads and commit).
 */
export function taskEnvironment(size: TaskSize): Record<string, string> {
  return {
    [SQL_LIMIT_VARIABLES.memory]: `${Math.floor(size.memoryMb / 2)}MB`,
    [SQL_LIMIT_VARIABLES.temp]: `${Math.floor(size.ephemeralStorageMb / 2)}MB`,
    [SQL_LIMIT_VARIABLES.timeout]: `${Math.floor((size.timeoutSeconds * 2) / 3)} seconds`,
    [BATCH_BYTES_VARIABLE]: String(Math.floor(batchBytesFor(size))),
  };
}

/** The default batch bound the environment sets (a number of bytes or a size), checked. */
export function batchBytesFromEnv(env: NodeJS.ProcessEnv = process.env): number {
  const text = env[BATCH_BYTES_VARIABLE];
  if (text === undefined) return batchBytesFor(DEFAULT_TASK_SIZE);
  const bytes = parseByteSize(text);
  if (bytes === undefined || bytes <= 0)
    throw new TypeError(
      `${BATCH_BYTES_VARIABLE} must be a size such as "128MB", not ${JSON.stringify(text)}`,
    );
  return bytes;
}
