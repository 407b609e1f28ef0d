import type { AddFile } from "./actions.ts";

/**
 * A checkpoint's `add` actions as a snapshot starts from them: the decoded paths at once, the actions
 * themselves only when first asked for (`actions`, called at most once by each `LiveFiles` and
 * expected to cache its result). Loading a snapshot needs the paths (to reconcile the commits after
 * the checkpoint); only a reader of the files' sizes, stats or partition values needs the rest, and
 * building 1,000 actions from their columns was most of a snapshot load's work.
 */
export interface CheckpointFiles {
  /** Each add's path as decoded from the log's URI-encoded `path`, in the checkpoint's row order. */
  readonly keys: readonly string[];
  /** The adds, one a key, in the same order. */
  readonly actions: () => readonly AddFile[];
}

/** A checkpoint's files with each key's position: built once per checkpoint, shared by every state over it. */
interface Base {
  /** The keys in order, each once. */
  readonly keys: readonly string[];
  /** A key's position in `keys`. */
  readonly index: ReadonlyMap<string, number>;
  /** The position in the checkpoint's actions of each key's add (`undefined`: the same as in `keys`). */
  readonly rows: readonly number[] | undefined;
  readonly actions: () => readonly AddFile[];
}

/**
 * The live files of a table state, keyed by decoded path: a `Map` to its readers (its order that of
 * a `Map` given the checkpoint's adds, then each commit's in turn), over a checkpoint's files whose
 * actions are built only when a reader asks for one (`CheckpointFiles`). The commits replayed after
 * the checkpoint are kept apart: an add of a checkpoint's live path replaces its action in place, a
 * remove hides it, and any other add joins the tail.
 */
export class LiveFiles implements ReadonlyMap<string, AddFile> {
  readonly #base: Base | undefined;
  /** 1 at a base position a remove took out; allocated at the first one. */
  #removed: Uint8Array | undefined;
  #removedCount = 0;
  /** Base positions whose add a later commit replaced. */
  readonly #replaced: Map<number, AddFile>;
  /** Files not live in the base, in the order they were added. */
  readonly #tail: Map<string, AddFile>;

  private constructor(
    base: Base | undefined,
    removed: Uint8Array | undefined,
    removedCount: number,
    replaced: Map<number, AddFile>,
    tail: Map<string, AddFile>,
  ) {
    this.#base = base;
    this.#removed = removed;
    this.#removedCount = removedCount;
    this.#replaced = replaced;
    this.#tail = tail;
  }

  /** No files. */
  static empty(): LiveFiles {
    return new LiveFiles(undefined, undefined, 0, new Map(), new Map());
  }

  /** The files of a checkpoint (a path listed twice counts once, its last add winning, as `Map.set` would). */
  static fromCheckpoint(files: CheckpointFiles): LiveFiles {
    const index = new Map<string, number>();
    let unique: string[] | undefined;
    let rows: number[] | undefined;
    files.keys.forEach((key, row) => {
      const at = index.get(key);
      if (at === undefined && unique === undefined) {
        index.set(key, row);
        return;
      }
      // A repeated path: from here on, keys and rows are kept apart from the checkpoint's rows.
      unique ??= files.keys.slice(0, row);
      rows ??= unique.map((_, i) => i);
      if (at === undefined) {
        index.set(key, unique.length);
        unique.push(key);
        rows.push(row);
      } else rows[at] = row;
    });
    const base: Base = { keys: unique ?? files.keys, index, rows, actions: once(files.actions) };
    return new LiveFiles(base, undefined, 0, new Map(), new Map());
  }

  /** `files` as live files: a copy of its state when it is one, else its entries in order. */
  static of(files: ReadonlyMap<string, AddFile> | undefined): LiveFiles {
    if (files instanceof LiveFiles) return files.copy();
    return new LiveFiles(undefined, undefined, 0, new Map(), new Map(files ?? []));
  }

  /** A copy to change apart from this one (the checkpoint's files shared, not copied). */
  copy(): LiveFiles {
    return new LiveFiles(
      this.#base,
      this.#removed?.slice(),
      this.#removedCount,
      new Map(this.#replaced),
      new Map(this.#tail),
    );
  }

  get size(): number {
    return (this.#base?.keys.length ?? 0) - this.#removedCount + this.#tail.size;
  }

  has(key: string): boolean {
    return this.#tail.has(key) || this.#livePosition(key) !== undefined;
  }

  get(key: string): AddFile | undefined {
    const found = this.#tail.get(key);
    if (found) return found;
    const at = this.#livePosition(key);
    return at === undefined ? undefined : this.#baseAction(at);
  }

  /** Adds or replaces `key`'s file (a commit's `add`). */
  set(key: string, add: AddFile): this {
    const at = this.#livePosition(key);
    if (at === undefined) this.#tail.set(key, add);
    else this.#replaced.set(at, add);
    return this;
  }

  /** Takes `key`'s file out (a commit's `remove`); whether it was live. */
  delete(key: string): boolean {
    const at = this.#livePosition(key);
    if (at === undefined) return this.#tail.delete(key);
    this.#removed ??= new Uint8Array(this.#base!.keys.length);
    this.#removed[at] = 1;
    this.#removedCount += 1;
    this.#replaced.delete(at);
    return true;
  }

  *keys(): MapIterator<string> {
    const base = this.#base;
    if (base) {
      for (let at = 0; at < base.keys.length; at++) if (this.#removed?.[at] !== 1) yield base.keys[at]!;
    }
    yield* this.#tail.keys();
  }

  *entries(): MapIterator<[string, AddFile]> {
    const base = this.#base;
    if (base) {
      for (let at = 0; at < base.keys.length; at++)
        if (this.#removed?.[at] !== 1) yield [base.keys[at]!, this.#baseAction(at)];
    }
    yield* this.#tail.entries();
  }

  *values(): MapIterator<AddFile> {
    for (const [, add] of this.entries()) yield add;
  }

  [Symbol.iterator](): MapIterator<[string, AddFile]> {
    return this.entries();
  }

  forEach(
    callback: (value: AddFile, key: string, map: ReadonlyMap<string, AddFile>) => void,
    thisArg?: unknown,
  ): void {
    for (const [key, add] of this.entries()) callback.call(thisArg, add, key, this);
  }

  /** Compared as a `Map` (by entries, in any order) by test matchers and printed as one. */
  get [Symbol.toStringTag](): string {
    return "Map";
  }

  #livePosition(key: string): number | undefined {
    const at = this.#base?.index.get(key);
    return at === undefined || this.#removed?.[at] === 1 ? undefined : at;
  }

  #baseAction(at: number): AddFile {
    const replaced = this.#replaced.get(at);
    if (replaced) return replaced;
    const base = this.#base!;
    return base.actions()[base.rows ? base.rows[at]! : at]!;
  }
}

function once<T>(make: () => T): () => T {
  let made: { value: T } | undefined;
  return () => (made ??= { value: make() }).value;
}
