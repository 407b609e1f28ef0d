import {
  DeleteCommand,
  GetCommand,
  type DynamoDBDocumentClient,
  type GetCommandOutput,
} from "@aws-sdk/lib-dynamodb";
import { CLAIM_ITEM, KEY, claimKey } from "./dynamo-pipeline-items.ts";
import { conditionalWrite, request } from "./dynamo-requests.ts";
import { TableOwnedError } from "./errors.ts";
import { StoreUnavailableError } from "../object-store/errors.ts";

/**
 * The registry of table owners on the Pipelines table: one `table#<name>` item per claimed table,
 * naming its pipeline. Claims and releases that go with a create or an edit are items of that
 * transaction; the rest are single conditional writes.
 */
export class DynamoTableClaims {
  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly table: string,
  ) {}

  /** The transaction item claiming `table` (free, or already this pipeline's). */
  claim(table: string, pipelineId: string, now: number) {
    return {
      Put: {
        TableName: this.table,
        Item: { [KEY]: claimKey(table), itemType: CLAIM_ITEM, ownerPipelineId: pipelineId, claimedAt: now },
        ConditionExpression: `attribute_not_exists(${KEY}) OR ownerPipelineId = :owner`,
        ExpressionAttributeValues: { ":owner": pipelineId },
      },
    };
  }

  /** The transaction item releasing `table` (unless another pipeline holds it). */
  release(table: string, pipelineId: string) {
    return {
      Delete: {
        TableName: this.table,
        Key: { [KEY]: claimKey(table) },
        ConditionExpression: "attribute_not_exists(ownerPipelineId) OR ownerPipelineId = :owner",
        ExpressionAttributeValues: { ":owner": pipelineId },
      },
    };
  }

  async owner(table: string): Promise<string | undefined> {
    const output: GetCommandOutput = await request(() =>
      this.client.send(
        new GetCommand({ TableName: this.table, Key: { [KEY]: claimKey(table) }, ConsistentRead: true }),
      ),
    );
    const owner = output.Item?.["ownerPipelineId"];
    return typeof owner === "string" ? owner : undefined;
  }

  /** Each claim goes on its own condition: one released elsewhere meanwhile is simply gone. */
  async releaseAll(pipelineId: string, tables: readonly string[]): Promise<void> {
    for (const table of tables) {
      await conditionalWrite(() =>
        this.client.send(
          new DeleteCommand({
            TableName: this.table,
            Key: { [KEY]: claimKey(table) },
            ConditionExpression: "ownerPipelineId = :owner",
            ExpressionAttributeValues: { ":owner": pipelineId },
          }),
        ),
      );
    }
  }

  /** A failed claim (transaction items from `first` on are `tables`' claims) names the owner. */
  async throwIfClaimed(tables: readonly string[], failedConditions: readonly number[], first: number) {
    for (const index of failedConditions) {
      const table = tables[index - first];
      if (table === undefined) continue;
      const owner = await this.owner(table);
      // Released between the transaction and the read: the caller's retry will find it free.
      throw owner
        ? new TableOwnedError(table, owner)
        : new StoreUnavailableError(`table ${table}: its owner changed during the request; try again`);
    }
  }
}
