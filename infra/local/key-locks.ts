/**
 * One writer at a time per key, in arrival order, and a way for readers to wait for the writes already
 * queued. S3 applies writes to one key atomically and in order; s3rver writes files in place, so
 * without this two conditional writers could both see "absent", and a reader could see half a file.
 */
export class KeyLocks {
  /** Per key, a promise that settles when every task queued so far has finished. */
  readonly #tails = new Map<string, Promise<void>>();

  /** Runs `task` once every earlier task on `key` has finished. */
  async exclusive<T>(key: string, task: () => Promise<T>): Promise<T> {
    const previous = this.#tails.get(key) ?? Promise.resolve();
    let release!: () => void;
    const done = new Promise<void>((resolve) => (release = resolve));
    const tail = previous.then(() => done);
    this.#tails.set(key, tail);
    await previous;
    try {
      return await task();
    } finally {
      release();
      if (this.#tails.get(key) === tail) this.#tails.delete(key);
    }
  }

  /** Settles once the tasks queued so far on `key` have finished. */
  settled(key: string): Promise<void> {
    return this.#tails.get(key) ?? Promise.resolve();
  }

  /** Settles once the tasks queued so far on every key starting with `prefix` have finished. */
  async settledUnder(prefix: string): Promise<void> {
    const pending = [...this.#tails].filter(([key]) => key.startsWith(prefix)).map(([, tail]) => tail);
    await Promise.all(pending);
  }
}
