import type { Action, AddFile, Metadata, Protocol, RemoveFile } from "../../../shared/delta/log/actions.ts";
import { commitKey } from "../../../shared/delta/log/log-paths.ts";
import { MemoryObjectStore } from "../../../shared/object-store/memory-object-store.ts";

/** Small Delta logs built in memory for unit tests: actions as the wire JSON, one commit per call. */

export const SCHEMA = JSON.stringify({
  type: "struct",
  fields: [
    { name: "id", type: "long", nullable: true, metadata: {} },
    { name: "part", type: "string", nullable: true, metadata: {} },
  ],
});

export function protocol(overrides: Partial<Protocol> = {}): Action {
  return { protocol: { minReaderVersion: 1, minWriterVersion: 2, ...overrides } };
}

export function metaData(overrides: Partial<Metadata> = {}): Action {
  return {
    metaData: {
      id: "table-id",
      format: { provider: "parquet", options: {} },
      schemaString: SCHEMA,
      partitionColumns: [],
      configuration: {},
      createdTime: 0,
      ...overrides,
    },
  };
}

export function add(path: string, overrides: Partial<AddFile> = {}): Action {
  return { add: { path, partitionValues: {}, size: 1, modificationTime: 0, dataChange: true, ...overrides } };
}

export function remove(path: string, overrides: Partial<RemoveFile> = {}): Action {
  return { remove: { path, deletionTimestamp: 0, dataChange: true, ...overrides } };
}

export function commitInfo(timestamp: number, extra: Record<string, unknown> = {}): Action {
  return { commitInfo: { timestamp, operation: "WRITE", ...extra } };
}

/** Writes commit `version` as newline-delimited JSON, the way a writer would. */
export async function writeCommit(store: MemoryObjectStore, version: number, actions: readonly Action[]) {
  const body = actions.map((a) => JSON.stringify(a)).join("\n") + "\n";
  const result = await store.putIfAbsent(commitKey(version), new TextEncoder().encode(body));
  if (result !== "created") throw new Error(`commit ${version} already exists`);
}

/**
 * A store holding commits 0..n-1: version 0 creates the table, each later one adds `f<v>`. Commit v
 * is written at 1000 + 100v ms, its file's modification time (which dates it: no in-commit timestamps).
 */
export async function tableWithCommits(n: number, clock = { now: 1_000 }): Promise<MemoryObjectStore> {
  const store = new MemoryObjectStore(() => clock.now);
  for (let v = 0; v < n; v++) {
    clock.now = 1_000 + v * 100;
    const actions = v === 0 ? [commitInfo(1_000), protocol(), metaData()] : [commitInfo(1_000 + v * 100)];
    await writeCommit(store, v, [...actions, add(`f${v}`)]);
  }
  return store;
}
