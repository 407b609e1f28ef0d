import { setTimeout as sleep } from "node:timers/promises";
import {
  ConditionalCheckFailedException,
  ResourceNotFoundException,
  TransactionCanceledException,
} from "@aws-sdk/client-dynamodb";
import { unmarshall } from "@aws-sdk/util-dynamodb";
import { StoreConfigurationError } from "./errors.ts";
import { StoreError, StoreUnavailableError } from "../object-store/errors.ts";

/**
 * The one place where DynamoDB's exceptions become domain results or store errors. A failed
 * condition is an expected race (another writer got there first), so it is a value; anything else is
 * a `StoreError` with the SDK error as its cause, so no AWS type leaks past the repositories.
 */

/** Attempts when DynamoDB cancels a transaction because another one holds an item (TransactionConflict). */
const TRANSACTION_CONFLICT_ATTEMPTS = 4;
const TRANSACTION_CONFLICT_BACKOFF_MS = 25;

/** Runs a request whose failures are all unexpected: `request(() => client.send(new GetCommand(…)))`. */
export async function request<Output>(call: () => Promise<Output>): Promise<Output> {
  try {
    return await call();
  } catch (error) {
    throw translate(error);
  }
}

/** BatchWriteItem calls for one batch before the items DynamoDB leaves unprocessed are an outage (about 5 s). */
const UNPROCESSED_ATTEMPTS = 8;

/**
 * Sends a `BatchWriteItem` of `items` (at most 25) and sends again, after a short wait, the items
 * DynamoDB leaves unprocessed (throttling), a bounded number of times: DynamoDB Local on a full disk
 * leaves every item unprocessed, and an endless loop left an update RUNNING with no event.
 */
export async function batchWriteAll<Item>(
  what: string,
  items: readonly Item[],
  send: (batch: Item[]) => Promise<{ readonly unprocessed: Item[] | undefined }>,
): Promise<void> {
  let pending = [...items];
  for (let attempt = 0; pending.length > 0; attempt++) {
    if (attempt >= UNPROCESSED_ATTEMPTS)
      throw new StoreUnavailableError(
        `DynamoDB did not take ${pending.length} ${what} after ${attempt} attempts: retry shortly`,
      );
    if (attempt > 0) await sleep(Math.min(1000, 50 * 2 ** attempt));
    const batch = pending;
    pending = (await request(() => send(batch))).unprocessed ?? [];
  }
}

export type ConditionalWriteResult =
  | { readonly written: true }
  /**
   * The item as it stood when the condition failed, when the write asked for it
   * (`ReturnValuesOnConditionCheckFailure: "ALL_OLD"`) and the item exists: no second read to say why.
   */
  | { readonly written: false; readonly current?: Record<string, unknown> };

/** Runs a write carrying a `ConditionExpression`; a condition that does not hold is a result. */
export async function conditionalWrite(call: () => Promise<unknown>): Promise<ConditionalWriteResult> {
  try {
    await call();
    return { written: true };
  } catch (error) {
    if (!(error instanceof ConditionalCheckFailedException)) throw translate(error);
    return error.Item ? { written: false, current: unmarshall(error.Item) } : { written: false };
  }
}

export type TransactionResult =
  | { readonly ok: true }
  /** Indexes (into `TransactItems`) of the items whose condition did not hold. */
  | { readonly ok: false; readonly failedConditions: readonly number[] };

/**
 * Sends a `TransactWriteItems`. Failed conditions are a result naming the items; a cancellation
 * because another transaction holds an item is retried a few times, then reported as unavailable.
 */
export async function transactWrite(call: () => Promise<unknown>): Promise<TransactionResult> {
  for (let attempt = 1; ; attempt++) {
    try {
      await call();
      return { ok: true };
    } catch (error) {
      if (!(error instanceof TransactionCanceledException)) throw translate(error);
      const codes = (error.CancellationReasons ?? []).map((reason) => reason.Code ?? "None");
      const failedConditions = codes.flatMap((code, index) =>
        code === "ConditionalCheckFailed" ? [index] : [],
      );
      if (failedConditions.length > 0) return { ok: false, failedConditions };
      if (!codes.includes("TransactionConflict") || attempt >= TRANSACTION_CONFLICT_ATTEMPTS)
        throw translate(error);
      await sleep(TRANSACTION_CONFLICT_BACKOFF_MS * attempt);
    }
  }
}

function translate(error: unknown): StoreError {
  if (error instanceof StoreError) return error;
  if (error instanceof ResourceNotFoundException) {
    return new StoreConfigurationError(
      `DynamoDB table not found: check the table names the repositories were given (${error.message})`,
      { cause: error },
    );
  }
  const message = error instanceof Error ? error.message : String(error);
  return new StoreUnavailableError(`DynamoDB request failed: ${message}`, { cause: error });
}
