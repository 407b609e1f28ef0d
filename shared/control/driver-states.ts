import { MAX_PARALLEL_ITEMS, RETRYABLE_ERRORS, TASK_RETRY, type UpdateTask } from "./update-tasks.ts";

/**
 * The two kinds of state the update machine is made of, with Step Functions' semantics, for the
 * in-process driver (update-driver.ts): a Task with the machine's Retry, and an inline Map whose items
 * run side by side, each with its own Catch.
 */

/** The execution was stopped (StopExecution): no task runs after it. */
export class Stopped extends Error {}

/** An item of a Map failed (its own Catch has run): the Map fails with it as the cause. */
export class MapFailed extends Error {}

export interface TaskOptions {
  readonly sleep: (ms: number) => Promise<void>;
  /** Asked before each task: true once the execution was stopped. */
  readonly stopped?: () => boolean;
  /** Told each task state as it is entered. */
  readonly onTask?: (state: UpdateTask) => void | Promise<void>;
}

/** A Task state: `work`, retried on `RETRYABLE_ERRORS` with the machine's backoff. */
export async function runTask<T>(
  options: TaskOptions,
  state: UpdateTask,
  work: () => Promise<T>,
): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    if (options.stopped?.()) throw new Stopped();
    await options.onTask?.(state);
    try {
      return await work();
    } catch (error) {
      const name = error instanceof Error ? error.name : "";
      if (attempt >= TASK_RETRY.maxAttempts || !(RETRYABLE_ERRORS as readonly string[]).includes(name))
        throw error;
      await options.sleep(TASK_RETRY.intervalSeconds * 1000 * TASK_RETRY.backoffRate ** attempt);
    }
  }
}

/**
 * An inline Map: up to `MAX_PARALLEL_ITEMS` items at a time; no item starts after one failed. The
 * failed item's Catch (`caught`) runs once, then the Map fails with `MapFailed`; a stop fails it as
 * `Stopped`.
 */
export async function runMap<Item>(
  items: readonly Item[],
  work: (item: Item) => Promise<void>,
  caught: (error: unknown) => Promise<unknown>,
): Promise<void> {
  let next = 0;
  let failure: { error: unknown } | undefined;
  const worker = async () => {
    while (failure === undefined && next < items.length) {
      const item = items[next++] as Item;
      try {
        await work(item);
      } catch (error) {
        if (error instanceof Stopped) failure ??= { error };
        else if (failure === undefined) {
          failure = { error: new MapFailed("", { cause: error }) };
          await caught(error).catch(() => undefined);
        }
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(MAX_PARALLEL_ITEMS, items.length) }, worker));
  if (failure) throw failure.error;
}
