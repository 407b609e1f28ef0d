import { randomUUID } from "node:crypto";
import {
  BatchWriteCommand,
  DeleteCommand,
  GetCommand,
  ScanCommand,
  TransactWriteCommand,
  UpdateCommand,
  type BatchWriteCommandOutput,
  type DynamoDBDocumentClient,
  type GetCommandOutput,
  type ScanCommandOutput,
} from "@aws-sdk/lib-dynamodb";
import { PIPELINES_TABLE } from "./table-schemas.ts";
import type { PipelineDefinition } from "../pipeline/definition-schema.ts";
import { pipelineTables } from "../pipeline/pipeline-tables.ts";
import {
  DefinitionTooLargeError,
  DefinitionVersionNotFoundError,
  PipelineNotFoundError,
  StoreError,
  StoreUnavailableError,
  TableOwnedError,
} from "./errors.ts";
import { conditionalWrite, request, transactWrite } from "./dynamo-requests.ts";
import {
  MAX_DEFINITION_BYTES,
  type ActiveUpdateResult,
  type BeginUpdateResult,
  type DefinitionVersion,
  type DeleteOptions,
  type DeleteResult,
  type EditResult,
  type PipelineRecord,
  type PipelineState,
  type PipelinesRepository,
  type RewindBlock,
} from "./pipelines-repository.ts";

/**
 * Pipelines on DynamoDB. The table has only a partition key, so each pipeline is several items:
 *
 * - `<pipelineId>`: the pipeline (state, active update, current definition version);
 * - `<pipelineId>#v<version, 8 digits>`: one per definition version, the definition as JSON text
 *   (text, not a map, so the order of declared columns survives);
 * - `table#<catalog>.<schema>.<table>`: the claim of a table by the pipeline that owns it.
 *
 * A create writes the pipeline, its first version and its claims in one transaction; an edit writes
 * the new version, moves the pipeline's version and claims or releases the tables that changed in
 * one transaction, conditioned on the version it read — so of concurrent claims of one table exactly
 * one wins. The pipeline item lists the tables it holds (`ownedTables`).
 */

const KEY = PIPELINES_TABLE.partitionKey;
const PIPELINE_ITEM = "pipeline";
const DEFINITION_ITEM = "definition";
const CLAIM_ITEM = "table-claim";
/** Attempts to begin an update when the previous one ends during the attempt. */
const FREED_RETRIES = 3;
/** BatchWriteItem's limit. */
const BATCH_SIZE = 25;

interface PipelineItem {
  readonly pipelineId: string;
  readonly itemType: typeof PIPELINE_ITEM;
  readonly name: string;
  readonly definitionVersion: number;
  readonly pipelineState: PipelineState;
  readonly activeUpdateId?: string;
  readonly rewindBlockedBy?: string;
  /** Absent on pipelines created before tables had owners. */
  readonly ownedTables?: readonly string[];
  readonly createdAt: number;
  readonly lastModified: number;
}

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

  constructor(options: DynamoPipelinesRepositoryOptions) {
    this.client = options.client;
    this.table = options.tableName;
    this.now = options.now ?? Date.now;
  }

  async create(definition: PipelineDefinition): Promise<PipelineRecord> {
    const now = this.now();
    const tables = pipelineTables(definition);
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
                Item: this.versionItem(item.pipelineId, 1, definition, now),
                ConditionExpression: `attribute_not_exists(${KEY})`,
              },
            },
            ...tables.map((table) => this.claim(table, item.pipelineId, now)),
          ],
        }),
      ),
    );
    if (!result.ok) {
      await this.throwIfClaimed(tables, result.failedConditions, 2);
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
        FilterExpression: "itemType = :pipeline",
        ExpressionAttributeValues: { ":pipeline": PIPELINE_ITEM },
        ...(startKey ? { ExclusiveStartKey: startKey } : {}),
      };
      const page: ScanCommandOutput = await request(() => this.client.send(new ScanCommand(input)));
      records.push(...(page.Items ?? []).map((item) => toRecord(item as PipelineItem)));
      startKey = page.LastEvaluatedKey;
    } while (startKey);
    return records.sort((a, b) => b.createdAt - a.createdAt || a.pipelineId.localeCompare(b.pipelineId));
  }

  async getDefinition(pipelineId: string, version?: number): Promise<DefinitionVersion> {
    const wanted = version ?? (await this.requireItem(pipelineId)).definitionVersion;
    const output: GetCommandOutput = await request(() =>
      this.client.send(
        new GetCommand({
          TableName: this.table,
          Key: { [KEY]: versionKey(pipelineId, wanted) },
          ConsistentRead: true,
        }),
      ),
    );
    if (!output.Item) throw new DefinitionVersionNotFoundError(pipelineId, wanted);
    return toDefinitionVersion(pipelineId, output.Item);
  }

  async listDefinitions(pipelineId: string): Promise<DefinitionVersion[]> {
    const current = (await this.requireItem(pipelineId)).definitionVersion;
    const versions: DefinitionVersion[] = [];
    for (let version = 1; version <= current; version++)
      versions.push(await this.getDefinition(pipelineId, version));
    return versions;
  }

  async edit(
    pipelineId: string,
    definition: PipelineDefinition,
    expectedVersion: number,
  ): Promise<EditResult> {
    const now = this.now();
    const version = expectedVersion + 1;
    const held = (await this.requireItem(pipelineId)).ownedTables ?? [];
    const tables = pipelineTables(definition);
    const claimed = tables.filter((table) => !held.includes(table));
    const released = held.filter((table) => !tables.includes(table));
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
                Item: this.versionItem(pipelineId, version, definition, now),
                ConditionExpression: `attribute_not_exists(${KEY})`,
              },
            },
            ...claimed.map((table) => this.claim(table, pipelineId, now)),
            ...released.map((table) => ({
              Delete: {
                TableName: this.table,
                Key: { [KEY]: claimKey(table) },
                ConditionExpression: "attribute_not_exists(ownerPipelineId) OR ownerPipelineId = :owner",
                ExpressionAttributeValues: { ":owner": pipelineId },
              },
            })),
          ],
        }),
      ),
    );
    if (result.ok) return { outcome: "edited", version };
    await this.throwIfClaimed(claimed, result.failedConditions, 2);
    const current = await this.requireItem(pipelineId);
    return { outcome: "version-conflict", currentVersion: current.definitionVersion };
  }

  async delete(pipelineId: string, options: DeleteOptions = {}): Promise<DeleteResult> {
    const deleted = await this.deleteAttempt(pipelineId, 1);
    if (deleted.outcome === "deleted" && !options.keepTables)
      await this.releaseTables(pipelineId, deleted.tables);
    return deleted;
  }

  async tableOwner(table: string): Promise<string | undefined> {
    const output: GetCommandOutput = await request(() =>
      this.client.send(
        new GetCommand({ TableName: this.table, Key: { [KEY]: claimKey(table) }, ConsistentRead: true }),
      ),
    );
    const owner = output.Item?.["ownerPipelineId"];
    return typeof owner === "string" ? owner : undefined;
  }

  /** Each claim goes on its own condition: one released elsewhere meanwhile is simply gone. */
  async releaseTables(pipelineId: string, tables: readonly string[]): Promise<void> {
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

  private claim(table: string, pipelineId: string, now: number) {
    return {
      Put: {
        TableName: this.table,
        Item: { [KEY]: claimKey(table), itemType: CLAIM_ITEM, ownerPipelineId: pipelineId, claimedAt: now },
        ConditionExpression: `attribute_not_exists(${KEY}) OR ownerPipelineId = :owner`,
        ExpressionAttributeValues: { ":owner": pipelineId },
      },
    };
  }

  /** A failed claim (transaction items from `first` on are `tables`' claims) names the owner. */
  private async throwIfClaimed(
    tables: readonly string[],
    failedConditions: readonly number[],
    first: number,
  ): Promise<void> {
    for (const index of failedConditions) {
      const table = tables[index - first];
      if (table === undefined) continue;
      const owner = await this.tableOwner(table);
      // Released between the transaction and the read: the caller's retry will find it free.
      throw owner ? new TableOwnedError(table, owner) : unsettledClaim(table);
    }
  }

  private async deleteAttempt(pipelineId: string, attempt: number): Promise<DeleteResult> {
    let deleted: PipelineItem | undefined;
    const outcome = await conditionalWrite(async () => {
      const output = await this.client.send(
        new DeleteCommand({
          TableName: this.table,
          Key: { [KEY]: pipelineId },
          ConditionExpression: "itemType = :pipeline AND attribute_not_exists(activeUpdateId)",
          ExpressionAttributeValues: { ":pipeline": PIPELINE_ITEM },
          ReturnValues: "ALL_OLD",
        }),
      );
      deleted = output.Attributes as PipelineItem | undefined;
    });
    if (outcome === "condition-failed") {
      const current = await this.requireItem(pipelineId);
      if (current.activeUpdateId) return { outcome: "pipeline-busy", activeUpdateId: current.activeUpdateId };
      // The active update ended between the delete and the read: try again.
      if (attempt >= FREED_RETRIES) throw unsettled(pipelineId);
      return this.deleteAttempt(pipelineId, attempt + 1);
    }
    if (!deleted) throw new PipelineNotFoundError(pipelineId);
    // Version items go after the pipeline item: a crash in between leaves only unreachable versions.
    const keys = Array.from({ length: deleted.definitionVersion }, (_, i) => ({
      DeleteRequest: { Key: { [KEY]: versionKey(pipelineId, i + 1) } },
    }));
    for (let start = 0; start < keys.length; start += BATCH_SIZE) {
      let pending: NonNullable<BatchWriteCommandOutput["UnprocessedItems"]>[string] = keys.slice(
        start,
        start + BATCH_SIZE,
      );
      while (pending.length > 0) {
        const batch = pending;
        const output: BatchWriteCommandOutput = await request(() =>
          this.client.send(new BatchWriteCommand({ RequestItems: { [this.table]: batch } })),
        );
        pending = output.UnprocessedItems?.[this.table] ?? [];
      }
    }
    return { outcome: "deleted", tables: deleted.ownedTables ?? [] };
  }

  async beginUpdate(
    pipelineId: string,
    updateId: string,
    state: PipelineState = "RUNNING",
  ): Promise<BeginUpdateResult> {
    for (let attempt = 1; ; attempt++) {
      const outcome = await conditionalWrite(() =>
        this.client.send(
          new UpdateCommand({
            TableName: this.table,
            Key: { [KEY]: pipelineId },
            UpdateExpression: "SET activeUpdateId = :update, pipelineState = :state, lastModified = :now",
            ConditionExpression: "itemType = :pipeline AND attribute_not_exists(activeUpdateId)",
            ExpressionAttributeValues: {
              ":update": updateId,
              ":state": state,
              ":now": this.now(),
              ":pipeline": PIPELINE_ITEM,
            },
          }),
        ),
      );
      const current = await this.requireItem(pipelineId);
      if (outcome === "written") return { outcome: "begun", pipeline: toRecord(current) };
      if (current.activeUpdateId) return { outcome: "pipeline-busy", activeUpdateId: current.activeUpdateId };
      // The active update ended between the write and the read: the pipeline is free again.
      if (attempt >= FREED_RETRIES) throw unsettled(pipelineId);
    }
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
  ): Promise<ActiveUpdateResult> {
    return this.whileActive(
      pipelineId,
      updateId,
      "SET pipelineState = :state, lastModified = :now REMOVE activeUpdateId",
      { ":state": state },
    );
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
    if (outcome === "condition-failed") throw new PipelineNotFoundError(pipelineId);
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
        }),
      ),
    );
    if (outcome === "written") return { outcome: "updated" };
    const current = await this.requireItem(pipelineId);
    return {
      outcome: "not-active",
      ...(current.activeUpdateId ? { activeUpdateId: current.activeUpdateId } : {}),
    };
  }

  private versionItem(pipelineId: string, version: number, definition: PipelineDefinition, now: number) {
    const definitionJson = JSON.stringify(definition);
    const bytes = Buffer.byteLength(definitionJson);
    if (bytes > MAX_DEFINITION_BYTES) throw new DefinitionTooLargeError(bytes, MAX_DEFINITION_BYTES);
    return {
      [KEY]: versionKey(pipelineId, version),
      itemType: DEFINITION_ITEM,
      version,
      definitionJson,
      createdAt: now,
    };
  }

  private async readItem(pipelineId: string): Promise<PipelineItem | undefined> {
    const output: GetCommandOutput = await request(() =>
      this.client.send(
        new GetCommand({ TableName: this.table, Key: { [KEY]: pipelineId }, ConsistentRead: true }),
      ),
    );
    const item = output.Item as PipelineItem | undefined;
    return item?.itemType === PIPELINE_ITEM ? item : undefined;
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

function unsettled(pipelineId: string): StoreUnavailableError {
  return new StoreUnavailableError(
    `pipeline ${pipelineId}: its active update kept changing during the request; try again`,
  );
}

function unsettledClaim(table: string): StoreUnavailableError {
  return new StoreUnavailableError(`table ${table}: its owner changed during the request; try again`);
}

function claimKey(table: string): string {
  return `table#${table}`;
}

function versionKey(pipelineId: string, version: number): string {
  return `${pipelineId}#v${String(version).padStart(8, "0")}`;
}

function toRecord(item: PipelineItem): PipelineRecord {
  return {
    pipelineId: item.pipelineId,
    name: item.name,
    definitionVersion: item.definitionVersion,
    state: item.pipelineState,
    ...(item.activeUpdateId ? { activeUpdateId: item.activeUpdateId } : {}),
    rewindBlocked: item.rewindBlockedBy !== undefined,
    ...(item.rewindBlockedBy ? { rewindBlockedBy: item.rewindBlockedBy } : {}),
    createdAt: item.createdAt,
    lastModified: item.lastModified,
  };
}

function toDefinitionVersion(pipelineId: string, item: Record<string, unknown>): DefinitionVersion {
  return {
    pipelineId,
    version: item["version"] as number,
    definition: JSON.parse(item["definitionJson"] as string) as PipelineDefinition,
    createdAt: item["createdAt"] as number,
  };
}
