import type { OptimizeResult } from "../client/ebb-client.ts";

/**
 * What `ebb optimize` did, in a sentence: the files compacted into how many, the version it
 * committed and the one it read; for a dry run, what it would compact. Pure.
 */
export function optimizeOutcome(table: string, result: OptimizeResult): string {
  const { metrics } = result;
  const removed = `${count(metrics.num_files_removed, "file")} (${bytes(metrics.num_bytes_removed)})`;
  const skipped =
    metrics.num_files_skipped > 0
      ? `; ${count(metrics.num_files_skipped, "file")} left as ${metrics.num_files_skipped === 1 ? "it is" : "they are"} (at the target size, or alone in its partition)`
      : "";
  if (metrics.num_bins === 0)
    return `${table}: nothing to compact at version ${result.read_version}${skipped}\n`;
  if (result.dry_run || result.version === undefined) {
    return `${table}: would compact ${removed} in ${count(metrics.num_bins, "bin")} at version ${result.read_version} (dry run, nothing written)${skipped}\n`;
  }
  const added = `${count(metrics.num_files_added ?? 0, "file")} (${bytes(metrics.num_bytes_added ?? 0)})`;
  return `${table}: compacted ${removed} into ${added}, version ${result.version} (read version ${result.read_version})${skipped}\n`;
}

function count(n: number, noun: string): string {
  return `${n.toLocaleString("en")} ${noun}${n === 1 ? "" : "s"}`;
}

function bytes(n: number): string {
  return `${n.toLocaleString("en")} bytes`;
}
