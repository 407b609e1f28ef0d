import type { ObjectStore } from "../../shared/object-store/object-store.ts";
import { writePipelineTables } from "./pipeline-tables.ts";
import { writeSharedSinkTables } from "./shared-sink-table.ts";

/**
 * The pipelines the suite runs for other engines to read, each across a rewind (or a branch's
 * publish) and replay: a label
 * and the run, which answers each dataset's table root (a key prefix of the store it ran on).
 */
export const PIPELINE_RUNS: readonly (readonly [
  label: string,
  write: (store: ObjectStore) => Promise<Record<string, string>>,
])[] = [
  ["pipeline", (store) => writePipelineTables(store)],
  // The bad deploy undone by a branch's publish instead of a rewind (docs/branches.md "Publish").
  ["branch publish", (store) => writePipelineTables(store, { publish: true })],
  ["shared sink", writeSharedSinkTables],
];
