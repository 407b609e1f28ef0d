import {
  DeleteCommand,
  GetCommand,
  PutCommand,
  TransactWriteCommand,
  UpdateCommand,
  type DynamoDBDocumentClient,
  type GetCommandOutput,
  type UpdateCommandOutput,
} from "@aws-sdk/lib-dynamodb";
import { UPDATES_TABLE } from "./table-schemas.ts";
import { UpdateNotFoundError } from "./errors.ts";
import { StoreError } from "../object-store/errors.ts";
import { conditionalWrite, request, transactWrite } from "./dynamo-requests.ts";
import { dynamoItems } from "./dynamo-store-writes.ts";
import { checkWritesTogether, type StoreWrite } from "./store-writes.ts";
import { queryPage, type Page, type PageRequest } from "./query-pages.ts";
import { TimeOrderedIds } from "./time-ordered-id.ts";
import { z } from "zod";
import {
  TERMINAL_UPDATE_STATES,
  UPDATE_CAUSES,
  UPDATE_STATES,
  isTerminal,
  type NewUpdate,
  type TransitionDetails,
  type TransitionResult,
  type UpdateRecord,
  type UpdateState,
  type UpdatesRepository,
} from "./updates-repository.ts";

/**
 * Updates on DynamoDB: one item per update, keyed `pipelineId` + time-ordered `updateId`. The request
 * and the intent are kept as JSON text so they read back exactly as they were given.
 */

const PARTITION = UPDATES_TABLE.partitionKey;
const SORT = UPDATES_TABLE.sortKey;
/** Fresh ids to try if one is taken (two updates in one millisecond with the same 80 random bits). */
const CREATE_ATTEMPTS = 3;

/** An update's item as stored: parsed on every read, as items written by an earlier Ebb may differ. */
const UpdateItemSchema = z.object({
  pipelineId: z.string(),
  updateId: z.string(),
  updateState: z.enum(UPDATE_STATES),
  cause: z.enum(UPDATE_CAUSES),
  definitionVersion: z.number(),
  requestJson: z.string(),
  intentJson: z.string(),
  createdAt: z.number(),
  lastModified: z.number(),
  endedAt: z.number().optional(),
  error: z.object({ errorCode: z.string().optional(), message: z.string() }).optional(),
  executionArn: z.string().optional(),
  handoverAt: z.number().optional(),
});
type UpdateItem = z.infer<typeof UpdateItemSchema>;

/** The request and the intent, each stored as JSON text of an object. */
const JsonObject = z.record(z.string(), z.unknown());

export interface DynamoUpdatesRepositoryOptions {
  readonly client: DynamoDBDocumentClient;
  readonly tableName: string;
  /** Epoch milliseconds. @default Date.now */
  readonly now?: () => number;
}

export class DynamoUpdatesRepository implements UpdatesRepository {
  private readonly client: DynamoDBDocumentClient;
  private readonly table: string;
  private readonly now: () => number;
  private readonly ids = new TimeOrderedIds();

  constructor(options: DynamoUpdatesRepositoryOptions) {
    this.client = options.client;
    this.table = options.tableName;
    this.now = options.now ?? Date.now;
  }

  async create(update: NewUpdate): Promise<UpdateRecord> {
    for (let attempt = 1; ; attempt++) {
      const now = this.now();
      const updateId = this.ids.next(now);
      const item: UpdateItem = {
        pipelineId: update.pipelineId,
        updateId,
        updateState: update.state ?? "CREATED",
        cause: update.cause,
        definitionVersion: update.definitionVersion,
        requestJson: JSON.stringify(update.request),
        intentJson: JSON.stringify(update.intent),
        createdAt: now,
        lastModified: now,
        ...(update.executionArnOf ? { executionArn: update.executionArnOf(updateId) } : {}),
      };
      const outcome = await conditionalWrite(() =>
        this.client.send(
          new PutCommand({
            TableName: this.table,
            Item: item,
            ConditionExpression: `attribute_not_exists(${SORT})`,
          }),
        ),
      );
      if (outcome.written) return toRecord(item);
      if (attempt >= CREATE_ATTEMPTS)
        throw new StoreError(`could not find a free update id for pipeline ${update.pipelineId}`);
    }
  }

  async get(pipelineId: string, updateId: string): Promise<UpdateRecord | undefined> {
    const output: GetCommandOutput = await request(() =>
      this.client.send(
        new GetCommand({
          TableName: this.table,
          Key: { [PARTITION]: pipelineId, [SORT]: updateId },
          ConsistentRead: true,
        }),
      ),
    );
    return output.Item && toRecord(output.Item);
  }

  async list(pipelineId: string, page: PageRequest): Promise<Page<UpdateRecord>> {
    const result = await queryPage(
      this.client,
      {
        input: {
          TableName: this.table,
          KeyConditionExpression: `${PARTITION} = :pipeline`,
          ExpressionAttributeValues: { ":pipeline": pipelineId },
          ConsistentRead: true,
        },
        order: "desc",
        keyAttributes: [PARTITION, SORT],
        scope: `updates/${pipelineId}`,
      },
      page,
    );
    return { ...result, items: result.items.map((item) => toRecord(item)) };
  }

  async transition(
    pipelineId: string,
    updateId: string,
    state: UpdateState,
    details: TransitionDetails = {},
  ): Promise<TransitionResult> {
    let updated: Record<string, unknown> | undefined;
    const outcome = await conditionalWrite(async () => {
      const output: UpdateCommandOutput = await this.client.send(
        new UpdateCommand({
          ...this.transitionUpdate(pipelineId, updateId, state, details),
          ReturnValues: "ALL_NEW",
          ReturnValuesOnConditionCheckFailure: "ALL_OLD",
        }),
      );
      updated = output.Attributes;
    });
    if (outcome.written && updated) return { outcome: "transitioned", update: toRecord(updated) };
    if (outcome.written || !outcome.current) throw new UpdateNotFoundError(pipelineId, updateId);
    return { outcome: "already-final", update: toRecord(outcome.current) };
  }

  async transitionWith(
    pipelineId: string,
    updateId: string,
    state: UpdateState,
    writes: readonly StoreWrite[],
  ): Promise<boolean> {
    checkWritesTogether(writes);
    const result = await transactWrite(() =>
      this.client.send(
        new TransactWriteCommand({
          TransactItems: [
            { Update: this.transitionUpdate(pipelineId, updateId, state, {}) },
            ...dynamoItems(writes),
          ],
        }),
      ),
    );
    return result.ok;
  }

  /** The conditional UpdateItem of a transition: refused once the update has ended (or is absent). */
  private transitionUpdate(
    pipelineId: string,
    updateId: string,
    state: UpdateState,
    details: TransitionDetails,
  ) {
    const sets = ["updateState = :state", "lastModified = :now"];
    const values: Record<string, unknown> = { ":state": state, ":now": this.now() };
    if (isTerminal(state)) sets.push("endedAt = :now");
    if (details.error) {
      sets.push("#error = :error");
      values[":error"] = details.error;
    }
    TERMINAL_UPDATE_STATES.forEach((terminal, i) => (values[`:terminal${i}`] = terminal));
    return {
      TableName: this.table,
      Key: { [PARTITION]: pipelineId, [SORT]: updateId },
      UpdateExpression: `SET ${sets.join(", ")}`,
      ConditionExpression: `attribute_exists(${SORT}) AND NOT updateState IN (${TERMINAL_UPDATE_STATES.map((_, i) => `:terminal${i}`).join(", ")})`,
      ...(details.error ? { ExpressionAttributeNames: { "#error": "error" } } : {}),
      ExpressionAttributeValues: values,
    };
  }

  async recordExecution(pipelineId: string, updateId: string, executionArn: string): Promise<void> {
    const outcome = await conditionalWrite(() =>
      this.client.send(
        new UpdateCommand({
          TableName: this.table,
          Key: { [PARTITION]: pipelineId, [SORT]: updateId },
          UpdateExpression: "SET executionArn = :arn, lastModified = :now",
          ConditionExpression: `attribute_exists(${SORT})`,
          ExpressionAttributeValues: { ":arn": executionArn, ":now": this.now() },
        }),
      ),
    );
    if (!outcome.written) throw new UpdateNotFoundError(pipelineId, updateId);
  }

  async requestHandover(pipelineId: string, updateId: string, at: number): Promise<void> {
    const outcome = await conditionalWrite(() =>
      this.client.send(
        new UpdateCommand({
          TableName: this.table,
          Key: { [PARTITION]: pipelineId, [SORT]: updateId },
          UpdateExpression: "SET handoverAt = :at, lastModified = :now",
          ConditionExpression: `attribute_exists(${SORT})`,
          ExpressionAttributeValues: { ":at": at, ":now": this.now() },
        }),
      ),
    );
    if (!outcome.written) throw new UpdateNotFoundError(pipelineId, updateId);
  }

  async discard(pipelineId: string, updateId: string): Promise<boolean> {
    const outcome = await conditionalWrite(() =>
      this.client.send(
        new DeleteCommand({
          TableName: this.table,
          Key: { [PARTITION]: pipelineId, [SORT]: updateId },
          ConditionExpression: "updateState = :queued",
          ExpressionAttributeValues: { ":queued": "QUEUED" },
        }),
      ),
    );
    return outcome.written;
  }
}

function toRecord(stored: unknown): UpdateRecord {
  const { updateState, requestJson, intentJson, ...rest } = UpdateItemSchema.parse(stored);
  return {
    ...rest,
    state: updateState,
    request: JsonObject.parse(JSON.parse(requestJson)),
    intent: JsonObject.parse(JSON.parse(intentJson)),
  };
}
