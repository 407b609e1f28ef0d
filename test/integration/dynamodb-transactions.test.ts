import { randomUUID } from "node:crypto";
import { TransactionCanceledException } from "@aws-sdk/client-dynamodb";
import { GetCommand, TransactWriteCommand } from "@aws-sdk/lib-dynamodb";
import { describe, expect, it } from "vitest";
import { testAws, testDocumentClient } from "../support/aws.ts";

describe("DynamoDB transactions", () => {
  it("cancels a TransactWriteItems whose condition fails and writes none of it", async () => {
    const db = testDocumentClient();
    const table = testAws().storage.pipelinesTable;
    const fresh = `pipeline-${randomUUID()}`;
    const missing = `pipeline-${randomUUID()}`;

    const transaction = db.send(
      new TransactWriteCommand({
        TransactItems: [
          { Put: { TableName: table, Item: { pipelineId: fresh, state: "idle" } } },
          {
            Update: {
              TableName: table,
              Key: { pipelineId: missing },
              UpdateExpression: "SET #state = :running",
              ConditionExpression: "attribute_exists(pipelineId)",
              ExpressionAttributeNames: { "#state": "state" },
              ExpressionAttributeValues: { ":running": "running" },
            },
          },
        ],
      }),
    );
    const error = await transaction.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(TransactionCanceledException);
    expect((error as TransactionCanceledException).CancellationReasons?.map((r) => r.Code)).toEqual([
      "None",
      "ConditionalCheckFailed",
    ]);

    const read = (pipelineId: string) =>
      db.send(new GetCommand({ TableName: table, Key: { pipelineId }, ConsistentRead: true }));
    expect((await read(fresh)).Item).toBeUndefined();
    expect((await read(missing)).Item).toBeUndefined();
  });

  it("applies every write of a transaction whose conditions hold", async () => {
    const db = testDocumentClient();
    const table = testAws().storage.pipelinesTable;
    const [a, b] = [`pipeline-${randomUUID()}`, `pipeline-${randomUUID()}`];
    await db.send(
      new TransactWriteCommand({
        TransactItems: [a, b].map((pipelineId) => ({
          Put: {
            TableName: table,
            Item: { pipelineId },
            ConditionExpression: "attribute_not_exists(pipelineId)",
          },
        })),
      }),
    );
    for (const pipelineId of [a, b]) {
      const { Item } = await db.send(
        new GetCommand({ TableName: table, Key: { pipelineId }, ConsistentRead: true }),
      );
      expect(Item).toEqual({ pipelineId });
    }
  });
});
