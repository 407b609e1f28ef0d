import { loadSnapshot, type Snapshot, TableNotFoundError } from "../delta/index.ts";
import type { ObjectStore } from "../object-store/object-store.ts";

/**
 * The table snapshots one rewind step reads, loaded once each: a plan reads every rewound table's
 * latest and target versions several times. Past versions never change; the latest version is cached
 * for the step too, which commits to a table at most once.
 */
export class TableSnapshots {
  readonly #versions = new Map<string, Promise<Snapshot>>();
  readonly #latest = new Map<string, Promise<Snapshot | undefined>>();

  constructor(private readonly tableStore: (dataset: string) => ObjectStore) {}

  /** The latest snapshot, or undefined when the table does not exist. */
  latest(dataset: string): Promise<Snapshot | undefined> {
    let loaded = this.#latest.get(dataset);
    if (!loaded) {
      loaded = this.#load(dataset).catch((error: unknown) => {
        if (error instanceof TableNotFoundError) return undefined;
        throw error;
      });
      this.#latest.set(dataset, loaded);
    }
    return loaded;
  }

  /** The snapshot at `version` (throws the Delta reader's errors when it cannot be loaded). */
  at(dataset: string, version: number): Promise<Snapshot> {
    const key = `${dataset}@${version}`;
    let loaded = this.#versions.get(key);
    if (!loaded) {
      loaded = this.#load(dataset, version);
      this.#versions.set(key, loaded);
      loaded.catch(() => this.#versions.delete(key));
    }
    return loaded;
  }

  async #load(dataset: string, version?: number): Promise<Snapshot> {
    return loadSnapshot(this.tableStore(dataset), version === undefined ? {} : { version });
  }
}

/** Runs `work` with a snapshot cache over the environment's tables. */
export function withTableSnapshots<T>(
  tableStore: (dataset: string) => ObjectStore,
  work: (snapshots: TableSnapshots) => Promise<T>,
): Promise<T> {
  return work(new TableSnapshots(tableStore));
}
