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
