import { statfs } from "node:fs/promises";
import { TempSpaceExhaustedError } from "./errors.ts";

/**
 * Telling a full temporary disk apart from a statement over its spill limit. Both stop a batch, but
 * they have different ways out: a spill over `EBB_SQL_TEMP_LIMIT` is the statement's
 * (`SQL_TEMP_SPACE_LIMIT_EXCEEDED`), a full disk is the batch's (`TEMP_SPACE_EXHAUSTED`: the batch's
 * own files took the room, whatever the spill).
 */

/** What DuckDB says when it may not spill a block: "failed to offload data block of size 256.0 KiB (4.0 MiB/244.1 MiB used)". */
const SPILL_REFUSAL = /failed to offload data block of size ([\d.]+ \w+) \(([\d.]+ \w+)\/([\d.]+ \w+) used\)/;

const UNIT_BYTES: Readonly<Record<string, number>> = {
  bytes: 1,
  KiB: 1024,
  MiB: 1024 ** 2,
  GiB: 1024 ** 3,
  TiB: 1024 ** 4,
};

/** `38.1 MiB` → bytes (DuckDB's rendering); NaN for a unit it does not use. */
function bytesOf(text: string): number {
  const [amount, unit] = text.split(" ");
  return Number(amount) * (UNIT_BYTES[unit ?? ""] ?? Number.NaN);
}

/**
 * How the disk-related failure `message` reads: `disk-full` when the disk had no room (ENOSPC, or a
 * spill refused while under its limit: DuckDB caps the limit at the disk's free space), `spill-limit`
 * when the spill really reached the limit, undefined for any other failure.
 */
export function diskFailureOf(message: string, code?: string): "disk-full" | "spill-limit" | undefined {
  if (code === "ENOSPC" || /No space left on device/i.test(message)) return "disk-full";
  const refusal = SPILL_REFUSAL.exec(message);
  if (refusal) {
    const [block, used, limit] = [bytesOf(refusal[1]!), bytesOf(refusal[2]!), bytesOf(refusal[3]!)];
    // One more block would have passed the limit: the spill reached it (DuckDB rounds to 0.1 unit).
    const tolerance = limit * 0.001 + 0.05 * (UNIT_BYTES[refusal[3]!.split(" ")[1]!] ?? 0);
    return used + block + tolerance >= limit ? "spill-limit" : "disk-full";
  }
  return undefined;
}

/** Whether `error` (or what caused it) says the disk was full. */
export function isDiskFull(error: unknown): boolean {
  for (let current = error; current instanceof Error; current = current.cause) {
    const code = (current as NodeJS.ErrnoException).code;
    if (diskFailureOf(current.message, typeof code === "string" ? code : undefined) === "disk-full")
      return true;
  }
  return false;
}

/** The free and total bytes of `folder`'s disk, or undefined if it cannot be read (removed meanwhile). */
export async function diskSpace(
  folder: string,
): Promise<{ freeBytes: number; sizeBytes: number } | undefined> {
  try {
    const stats = await statfs(folder);
    return { freeBytes: stats.bavail * stats.bsize, sizeBytes: stats.blocks * stats.bsize };
  } catch {
    return undefined;
  }
}

/** The `TempSpaceExhaustedError` for `error` when it says the disk of `folder` was full; undefined otherwise. */
export async function tempSpaceExhaustion(
  error: unknown,
  owner: string,
  folder: string,
): Promise<TempSpaceExhaustedError | undefined> {
  if (error instanceof TempSpaceExhaustedError) return error;
  if (!isDiskFull(error)) return undefined;
  return new TempSpaceExhaustedError(owner, folder, await diskSpace(folder), { cause: error });
}
