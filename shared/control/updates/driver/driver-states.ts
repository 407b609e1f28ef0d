import { MAX_PARALLEL_ITEMS, taskRetriers, type UpdateTask } from "../update-tasks.ts";

/**
 * The two kinds of state the update machine is made of, with Step Functions' semantics, for the
 * in-process driver (update-driver.ts): a Task with the machine's Retry list, and an inline Map whose items
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

/** A Task state: `work`, retried as the machine's Retry list for the state says (`taskRetriers`). */
export async function runTask<T>(
  options: TaskOptions,
  state: UpdateTask,
  work: () => Promise<T>,
): Promise<T> {
  const retriers = taskRetriers(state);
  // Each retrier counts its own attempts, as in Step Functions.
  const attempts = retriers.map(() => 0);
  for (;;) {
    if (options.stopped?.()) throw new Stopped();
    await options.onTask?.(state);
    try {
      return await work();
    } catch (error) {
      const name = error instanceof Error ? error.name : "";
      const index = retriers.findIndex((retrier) => retrier.errors.includes(name));
      const retrier = retriers[index];
      if (!retrier || attempts[index]! >= retrier.maxAttempts) throw error;
      const attempt = attempts[index]!++;
      await options.sleep(retrier.intervalSeconds * 1000 * retrier.backoffRate ** attempt);
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
  caught: (error: unknown, item: Item) => Promise<unknown>,
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
          await caught(error, item).catch(() => undefined);
        }
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(MAX_PARALLEL_ITEMS, items.length) }, worker));
  if (failure) throw failure.error;
}
