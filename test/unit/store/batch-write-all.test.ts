import { expect, it } from "vitest";
import { StoreUnavailableError } from "../../../shared/object-store/errors.ts";
import { batchWriteAll } from "../../../shared/store/dynamo-requests.ts";

/**
 * Items DynamoDB leaves unprocessed are sent again a bounded number of times: DynamoDB Local on a full
 * disk leaves every item unprocessed, and the endless loop left an update RUNNING with no event.
 */

it("sends the unprocessed items again until DynamoDB takes them", async () => {
  const sent: number[][] = [];
  await batchWriteAll("events", [1, 2, 3], async (batch) => {
    sent.push(batch);
    return { unprocessed: batch.length > 1 ? batch.slice(1) : undefined };
  });
  expect(sent).toEqual([[1, 2, 3], [2, 3], [3]]);
});

it("gives up with StoreUnavailableError when DynamoDB never takes them", async () => {
  let attempts = 0;
  const writing = batchWriteAll("events of Ebb-EventLog", [1, 2], async (batch) => {
    attempts++;
    return { unprocessed: batch };
  });
  await expect(writing).rejects.toThrow(StoreUnavailableError);
  await expect(writing).rejects.toThrow(/did not take 2 events of Ebb-EventLog after 8 attempts/);
  expect(attempts).toBe(8);
});
