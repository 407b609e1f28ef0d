import { PipelineChangeTooLargeError } from "./errors.ts";

/**
 * Writes of several repositories made as one: all or none, in one request (DynamoDB
 * TransactWriteItems). A step's state change and its events are written this way
 * (`UpdatesRepository.transitionWith`), so an update's step costs one write request, not one per
 * table, and no reader sees the new state without the events that led to it.
 *
 * A `StoreWrite` is opaque: a repository builds it (`PipelinesRepository.setStateWrite`,
 * `EventLogRepository.appendWrites`) and another repository of the same family takes it. The
 * DynamoDB adapters build TransactWriteItems entries, the memory adapters a check and an apply.
 */
declare const storeWrite: unique symbol;

export interface StoreWrite {
  readonly [storeWrite]: true;
}

/** TransactWriteItems' limit: the update's own write and up to 99 others. */
export const MAX_WRITES_TOGETHER = 100;

/** Refuses more writes than fit in one transaction beside the taker's own one (an Ebb bug if hit). */
export function checkWritesTogether(writes: readonly StoreWrite[]): void {
  if (writes.length >= MAX_WRITES_TOGETHER)
    throw new TypeError(`at most ${MAX_WRITES_TOGETHER - 1} writes go with a transition`);
}

/** The table claims a create or an edit moves: each claimed and each released is one write. */
export function movedTables(held: readonly string[], tables: readonly string[]) {
  return {
    claimed: tables.filter((table) => !held.includes(table)),
    released: held.filter((table) => !tables.includes(table)),
  };
}

/** A create's or an edit's own writes: the pipeline item and its new definition version. */
const PIPELINE_CHANGE_OWN_WRITES = 2;

/**
 * Refuses a create or an edit whose writes (its own, a claim or release per table that moves, and
 * the writes that go with it, e.g. an edit's warning events) do not fit one transaction. They must
 * be all or none — claims race other pipelines' — so they are not split; the user's way out is
 * smaller steps. Both adapters call this before writing anything.
 */
export function checkChangeFits(
  pipeline: { readonly id?: string; readonly name: string },
  moved: ReturnType<typeof movedTables>,
  writes: readonly StoreWrite[],
): void {
  const count = PIPELINE_CHANGE_OWN_WRITES + moved.claimed.length + moved.released.length + writes.length;
  if (count > MAX_WRITES_TOGETHER)
    throw new PipelineChangeTooLargeError(pipeline, {
      writes: count,
      limit: MAX_WRITES_TOGETHER,
      claimed: moved.claimed.length,
      released: moved.released.length,
      events: writes.length,
    });
}
