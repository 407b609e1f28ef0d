import { randomUUID } from "node:crypto";
import {
  DeleteCommand,
  GetCommand,
  PutCommand,
  ScanCommand,
  TransactWriteCommand,
  UpdateCommand,
  type DynamoDBDocumentClient,
  type GetCommandOutput,
  type ScanCommandOutput,
  type UpdateCommandOutput,
} from "@aws-sdk/lib-dynamodb";
import type { PipelineDefinition } from "../pipeline/definition-schema.ts";
import { pipelineTables } from "../pipeline/pipeline-tables.ts";
import {
  KEY,
  PIPELINE_ITEM,
  parsePipelineItem,
  pipelineItemSchema,
  toRecord,
  type PipelineItem,
} from "./dynamo-pipeline-items.ts";
import { DynamoDefinitionVersions } from "./dynamo-definition-versions.ts";
import { DynamoTableClaims } from "./dynamo-table-claims.ts";
import { PipelineNotFoundError } from "./errors.ts";
import { StoreError, StoreUnavailableError } from "../object-store/errors.ts";
import { dynamoItems, dynamoWrite } from "./dynamo-store-writes.ts";
import { checkChangeFits, movedTables, type StoreWrite } from "./store-writes.ts";
import { conditionalWrite, request, transactWrite } from "./dynamo-requests.ts";
import {
  type ActiveUpdateResult,
  type BeginUpdateOptions,
  type BeginUpdateResult,
  type DefinitionVersion,
  type DeleteOptions,
  type DeleteResult,
  type EditResult,
  type PipelineRecord,
  type PipelineState,
  type PipelinesRepository,
  type ResetUnderWay,
  type RewindBlock,
} from "./pipelines-repository.ts";

/**
 * Pipelines on DynamoDB: one item per pipeline (dynamo-pipeline-items.ts), with its definition
 * versions (dynamo-definition-versions.ts) and the table owners (dynamo-table-claims.ts) beside it.
 *
 * A create writes the pipeline, its first version and its claims in one transaction; an edit writes
 * the new version, moves the pipeline's version, claims or releases the tables that changed and
 * makes the writes it is given (its warning events) in one transaction, conditioned on the version it read — so of concurrent claims of one table exactly
 * one wins. The pipeline item lists the tables it holds (`ownedTables`). A write answers with the item
 * it wrote (`ReturnValues`), and a failed condition the item it failed on (`ReturnValuesOnConditionCheckFailure`).
 */

/** Attempts at a write whose condition failed because the active update ended meanwhile. */
const FREED_RETRIES = 3;

export interface DynamoPipelinesRepositoryOptions {
  readonly client: DynamoDBDocumentClient;
  readonly tableName: string;
  /** Epoch milliseconds. @default Date.now */
  readonly now?: () => number;
}

export class DynamoPipelinesRepository implements PipelinesRepository {
  private readonly client: DynamoDBDocumentClient;
  private readonly table: string;
  private readonly now: () => number;
  private readonly claims: DynamoTableClaims;
  private readonly versions: DynamoDefinitionVersions;

  constructor(options: DynamoPipelinesRepositoryOptions) {
    this.client = options.client;
    this.table = options.tableName;
    this.now = options.now ?? Date.now;
    this.claims = new DynamoTableClaims(options.client, options.tableName);
    this.versions = new DynamoDefinitionVersions(options.client, options.tableName);
  }

  async create(definition: PipelineDefinition): Promise<PipelineRecord> {
    const now = this.now();
    const tables = pipelineTables(definition);
    checkChangeFits({ name: definition.name }, movedTables([], tables), []);
    const item: PipelineItem = {
      pipelineId: randomUUID(),
      itemType: PIPELINE_ITEM,
      name: definition.name,
      definitionVersion: 1,
      pipelineState: "IDLE",
      ownedTables: tables,
      createdAt: now,
      lastModified: now,
    };
    const result = await transactWrite(() =>
      this.client.send(
        new TransactWriteCommand({
          TransactItems: [
            {
              Put: { TableName: this.table, Item: item, ConditionExpression: `attribute_not_exists(${KEY})` },
            },
            {
              Put: {
                TableName: this.table,
                Item: this.versions.item(item.pipelineId, 1, definition, now),
                ConditionExpression: `attribute_not_exists(${KEY})`,
              },
            },
            ...tables.map((table) => this.claims.claim(table, item.pipelineId, now)),
          ],
        }),
      ),
    );
    if (!result.ok) {
      await this.claims.throwIfClaimed(tables, result.failedConditions, 2);
      // A random UUID that is already taken is not a race anyone can act on.
      throw new StoreError(`pipeline id ${item.pipelineId} is already taken`);
    }
    return toRecord(item);
  }

  async get(pipelineId: string): Promise<PipelineRecord | undefined> {
    const item = await this.readItem(pipelineId);
    return item && toRecord(item);
  }

  async list(): Promise<PipelineRecord[]> {
    const records: PipelineRecord[] = [];
    let startKey: Record<string, unknown> | undefined;
    do {
      const input = {
        TableName: this.table,
        // A branch's item (addBranch) is a pipeline item, not a pipeline.
        FilterExpression: "itemType = :pipeline AND NOT contains(pipelineId, :branch)",
        ExpressionAttributeValues: { ":pipeline": PIPELINE_ITEM, ":branch": "~" },
        ...(startKey ? { ExclusiveStartKey: startKey } : {}),
      };
      const page: ScanCommandOutput = await request(() => this.client.send(new ScanCommand(input)));
      records.push(...(page.Items ?? []).map((item) => toRecord(pipelineItemSchema.parse(item))));
      startKey = page.LastEvaluatedKey;
    } while (startKey);
    return records.sort((a, b) => b.createdAt - a.createdAt || a.pipelineId.localeCompare(b.pipelineId));
  }

  async addBranch(branchPipelineId: string, name: string): Promise<void> {
    const now = this.now();
    const item: PipelineItem = {
      pipelineId: branchPipelineId,
      itemType: PIPELINE_ITEM,
      name,
      definitionVersion: 1,
      pipelineState: "IDLE",
      createdAt: now,
      lastModified: now,
    };
    // Made once: an item already there (maybe held by an update) stays as it is.
    await conditionalWrite(() =>
      this.client.send(
        new PutCommand({
          TableName: this.table,
          Item: item,
          ConditionExpression: `attribute_not_exists(${KEY})`,
        }),
      ),
    );
  }

  async getDefinition(pipelineId: string, version?: number): Promise<DefinitionVersion> {
    return this.versions.get(pipelineId, version ?? (await this.requireItem(pipelineId)).definitionVersion);
  }

  async listDefinitions(pipelineId: string): Promise<DefinitionVersion[]> {
    return this.versions.list(pipelineId, (await this.requireItem(pipelineId)).definitionVersion);
  }

  async edit(
    pipelineId: string,
    definition: PipelineDefinition,
    expectedVersion: number,
    writes: readonly StoreWrite[] = [],
  ): Promise<EditResult> {
    const now = this.now();
    const version = expectedVersion + 1;
    const held = (await this.requireItem(pipelineId)).ownedTables ?? [];
    const tables = pipelineTables(definition);
    const moved = movedTables(held, tables);
    checkChangeFits({ id: pipelineId, name: definition.name }, moved, writes);
    const { claimed, released } = moved;
    const result = await transactWrite(() =>
      this.client.send(
        new TransactWriteCommand({
          TransactItems: [
            {
              Update: {
                TableName: this.table,
                Key: { [KEY]: pipelineId },
                UpdateExpression:
                  "SET definitionVersion = :version, #name = :name, ownedTables = :tables, lastModified = :now",
                ConditionExpression: "itemType = :pipeline AND definitionVersion = :expected",
                ExpressionAttributeNames: { "#name": "name" },
                ExpressionAttributeValues: {
                  ":version": version,
                  ":name": definition.name,
                  ":tables": tables,
                  ":now": now,
                  ":pipeline": PIPELINE_ITEM,
                  ":expected": expectedVersion,
                },
              },
            },
            {
              Put: {
                TableName: this.table,
                Item: this.versions.item(pipelineId, version, definition, now),
                ConditionExpression: `attribute_not_exists(${KEY})`,
              },
            },
            ...claimed.map((table) => this.claims.claim(table, pipelineId, now)),
            ...released.map((table) => this.claims.release(table, pipelineId)),
            // Last, so the claims keep their places (throwIfClaimed reads failures by index).
            ...dynamoItems(writes),
          ],
        }),
      ),
    );
    if (result.ok) return { outcome: "edited", version };
    await this.claims.throwIfClaimed(claimed, result.failedConditions, 2);
    const current = await this.requireItem(pipelineId);
    return { outcome: "version-conflict", currentVersion: current.definitionVersion };
  }

  async delete(pipelineId: string, options: DeleteOptions = {}): Promise<DeleteResult> {
    const deleted = await untilSettled(pipelineId, () => this.deleteAttempt(pipelineId));
    if (deleted.outcome === "deleted" && !options.keepTables)
      await this.releaseTables(pipelineId, deleted.tables);
    return deleted;
  }

  tableOwner(table: string): Promise<string | undefined> {
    return this.claims.owner(table);
  }

  releaseTables(pipelineId: string, tables: readonly string[]): Promise<void> {
    return this.claims.releaseAll(pipelineId, tables);
  }

  /** Undefined when the pipeline's active update ended between the delete and the read. */
  private async deleteAttempt(pipelineId: string): Promise<DeleteResult | undefined> {
    let deleted: PipelineItem | undefined;
    const outcome = await conditionalWrite(async () => {
      const output = await this.client.send(
        new DeleteCommand({
          TableName: this.table,
          Key: { [KEY]: pipelineId },
          ConditionExpression: "itemType = :pipeline AND attribute_not_exists(activeUpdateId)",
          ExpressionAttributeValues: { ":pipeline": PIPELINE_ITEM },
          ReturnValues: "ALL_OLD",
          ReturnValuesOnConditionCheckFailure: "ALL_OLD",
        }),
      );
      deleted = parsePipelineItem(output.Attributes);
    });
    if (!outcome.written) {
      const current = this.requireFailed(pipelineId, outcome.current);
      return current.activeUpdateId
        ? { outcome: "pipeline-busy", activeUpdateId: current.activeUpdateId }
        : undefined;
    }
    if (!deleted) throw new PipelineNotFoundError(pipelineId);
    // Version items go after the pipeline item: a crash in between leaves only unreachable versions.
    await this.versions.deleteAll(pipelineId, deleted.definitionVersion);
    return { outcome: "deleted", tables: deleted.ownedTables ?? [] };
  }

  async beginUpdate(
    pipelineId: string,
    updateId: string,
    state: PipelineState = "RUNNING",
    options: BeginUpdateOptions = {},
  ): Promise<BeginUpdateResult> {
    const forget = options.restoresTables ? " REMOVE tablesWrittenBy" : "";
    return untilSettled(pipelineId, async (): Promise<BeginUpdateResult | undefined> => {
      let begun: PipelineItem | undefined;
      const outcome = await conditionalWrite(async () => {
        const output: UpdateCommandOutput = await this.client.send(
          new UpdateCommand({
            TableName: this.table,
            Key: { [KEY]: pipelineId },
            UpdateExpression: `SET activeUpdateId = :update, pipelineState = :state, lastModified = :now${forget}`,
            ConditionExpression: "itemType = :pipeline AND attribute_not_exists(activeUpdateId)",
            ExpressionAttributeValues: {
              ":update": updateId,
              ":state": state,
              ":now": this.now(),
              ":pipeline": PIPELINE_ITEM,
            },
            ReturnValues: "ALL_NEW",
            ReturnValuesOnConditionCheckFailure: "ALL_OLD",
          }),
        );
        begun = parsePipelineItem(output.Attributes);
      });
      if (outcome.written && begun) return { outcome: "begun", pipeline: toRecord(begun) };
      const current = this.requireFailed(pipelineId, outcome.written ? undefined : outcome.current);
      // No active update: it ended between the write and the read, so the pipeline is free again.
      return current.activeUpdateId
        ? { outcome: "pipeline-busy", activeUpdateId: current.activeUpdateId }
        : undefined;
    });
  }

  async setState(pipelineId: string, updateId: string, state: PipelineState): Promise<ActiveUpdateResult> {
    return this.whileActive(pipelineId, updateId, "SET pipelineState = :state, lastModified = :now", {
      ":state": state,
    });
  }

  async endUpdate(
    pipelineId: string,
    updateId: string,
    state: "IDLE" | "FAILED",
    tablesWrittenBy?: number,
  ): Promise<ActiveUpdateResult> {
    const { expression, values } = endUpdateChange(state, tablesWrittenBy);
    return this.whileActive(pipelineId, updateId, expression, values);
  }

  setStateWrite(pipelineId: string, updateId: string, state: PipelineState): StoreWrite {
    return dynamoWrite({
      Update: this.activeUpdateChange(
        pipelineId,
        updateId,
        "SET pipelineState = :state, lastModified = :now",
        {
          ":state": state,
        },
      ),
    });
  }

  endUpdateWrite(
    pipelineId: string,
    updateId: string,
    state: "IDLE" | "FAILED",
    tablesWrittenBy?: number,
  ): StoreWrite {
    const { expression, values } = endUpdateChange(state, tablesWrittenBy);
    return dynamoWrite({ Update: this.activeUpdateChange(pipelineId, updateId, expression, values) });
  }

  async setRewindBlock(pipelineId: string, block: RewindBlock): Promise<void> {
    const outcome = await conditionalWrite(() =>
      this.client.send(
        new UpdateCommand({
          TableName: this.table,
          Key: { [KEY]: pipelineId },
          UpdateExpression: block.blocked
            ? "SET rewindBlockedBy = :update, lastModified = :now"
            : "SET lastModified = :now REMOVE rewindBlockedBy",
          ConditionExpression: "itemType = :pipeline",
          ExpressionAttributeValues: {
            ":now": this.now(),
            ":pipeline": PIPELINE_ITEM,
            ...(block.blocked ? { ":update": block.byUpdateId } : {}),
          },
        }),
      ),
    );
    if (!outcome.written) throw new PipelineNotFoundError(pipelineId);
  }

  async markResetUnderWay(pipelineId: string, mark: ResetUnderWay): Promise<ActiveUpdateResult> {
    return this.whileActive(pipelineId, mark.updateId, "SET resetUnderWay = :mark, lastModified = :now", {
      ":mark": { updateId: mark.updateId, datasets: [...mark.datasets], since: mark.since },
    });
  }

  async clearResetUnderWay(pipelineId: string): Promise<void> {
    const outcome = await conditionalWrite(() =>
      this.client.send(
        new UpdateCommand({
          TableName: this.table,
          Key: { [KEY]: pipelineId },
          UpdateExpression: "SET lastModified = :now REMOVE resetUnderWay",
          ConditionExpression: "itemType = :pipeline",
          ExpressionAttributeValues: { ":now": this.now(), ":pipeline": PIPELINE_ITEM },
        }),
      ),
    );
    if (!outcome.written) throw new PipelineNotFoundError(pipelineId);
  }

  private async whileActive(
    pipelineId: string,
    updateId: string,
    expression: string,
    values: Record<string, unknown>,
  ): Promise<ActiveUpdateResult> {
    const outcome = await conditionalWrite(() =>
      this.client.send(
        new UpdateCommand({
          ...this.activeUpdateChange(pipelineId, updateId, expression, values),
          ReturnValuesOnConditionCheckFailure: "ALL_OLD",
        }),
      ),
    );
    if (outcome.written) return { outcome: "updated" };
    const current = this.requireFailed(pipelineId, outcome.current);
    return {
      outcome: "not-active",
      ...(current.activeUpdateId ? { activeUpdateId: current.activeUpdateId } : {}),
    };
  }

  /** An UpdateItem of the pipeline that holds only while `updateId` is its active update. */
  private activeUpdateChange(
    pipelineId: string,
    updateId: string,
    expression: string,
    values: Record<string, unknown>,
  ) {
    return {
      TableName: this.table,
      Key: { [KEY]: pipelineId },
      UpdateExpression: expression,
      ConditionExpression: "itemType = :pipeline AND activeUpdateId = :update",
      ExpressionAttributeValues: {
        ...values,
        ":update": updateId,
        ":now": this.now(),
        ":pipeline": PIPELINE_ITEM,
      },
    };
  }

  private async readItem(pipelineId: string): Promise<PipelineItem | undefined> {
    const output: GetCommandOutput = await request(() =>
      this.client.send(
        new GetCommand({ TableName: this.table, Key: { [KEY]: pipelineId }, ConsistentRead: true }),
      ),
    );
    return parsePipelineItem(output.Item);
  }

  /** The pipeline item a failed condition saw; none means there is no such pipeline. */
  private requireFailed(pipelineId: string, current: Record<string, unknown> | undefined): PipelineItem {
    const item = parsePipelineItem(current);
    if (!item) throw new PipelineNotFoundError(pipelineId);
    return item;
  }

  private async requireItem(pipelineId: string): Promise<PipelineItem> {
    const item = await this.readItem(pipelineId);
    if (!item) throw new PipelineNotFoundError(pipelineId);
    return item;
  }
}

/**
 * The fence of a write another repository makes for an update (a checkpoint's plan, commit or HEAD
 * move): a `TransactWriteItems` ConditionCheck that holds only while `updateId` is the pipeline's
 * active update.
 */
export function activeUpdateCheck(tableName: string, pipelineId: string, updateId: string) {
  return {
    ConditionCheck: {
      TableName: tableName,
      Key: { [KEY]: pipelineId },
      ConditionExpression: "itemType = :pipeline AND activeUpdateId = :update",
      ExpressionAttributeValues: { ":pipeline": PIPELINE_ITEM, ":update": updateId },
    },
  };
}

/** The pipeline's active update as stored now (a consistent read), for a fence that did not hold. */
export async function readActiveUpdate(
  client: DynamoDBDocumentClient,
  tableName: string,
  pipelineId: string,
): Promise<string | undefined> {
  const output: GetCommandOutput = await request(() =>
    client.send(
      new GetCommand({
        TableName: tableName,
        Key: { [KEY]: pipelineId },
        ConsistentRead: true,
        ProjectionExpression: "activeUpdateId",
      }),
    ),
  );
  return output.Item?.["activeUpdateId"] as string | undefined;
}

/** Runs `attempt` until it settles (undefined: the active update changed under it), a few times. */
async function untilSettled<T>(pipelineId: string, attempt: () => Promise<T | undefined>): Promise<T> {
  for (let n = 1; n <= FREED_RETRIES; n++) {
    const settled = await attempt();
    if (settled !== undefined) return settled;
  }
  throw new StoreUnavailableError(
    `pipeline ${pipelineId}: its active update kept changing during the request; try again`,
  );
}

/** The pipeline released from its active update, resting in `state` (and the tables' writer noted). */
function endUpdateChange(state: "IDLE" | "FAILED", tablesWrittenBy: number | undefined) {
  const written = tablesWrittenBy === undefined ? "" : ", tablesWrittenBy = :written";
  return {
    expression: `SET pipelineState = :state, lastModified = :now${written} REMOVE activeUpdateId`,
    values: { ":state": state, ...(tablesWrittenBy === undefined ? {} : { ":written": tablesWrittenBy }) },
  };
}
