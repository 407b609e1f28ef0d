import type { TransactWriteCommandInput } from "@aws-sdk/lib-dynamodb";
import type { StoreWrite } from "./store-writes.ts";

/** The DynamoDB adapters' `StoreWrite`: one entry of a TransactWriteItems request. */
export type DynamoWrite = NonNullable<TransactWriteCommandInput["TransactItems"]>[number];

export function dynamoWrite(item: DynamoWrite): StoreWrite {
  return { dynamo: item } as unknown as StoreWrite;
}

/** The TransactWriteItems entries of `writes` (all built by DynamoDB adapters). */
export function dynamoItems(writes: readonly StoreWrite[]): DynamoWrite[] {
  return writes.map((write) => {
    const item = (write as unknown as { dynamo?: DynamoWrite }).dynamo;
    if (!item) throw new TypeError("a DynamoDB repository was given another adapter's write");
    return item;
  });
}
