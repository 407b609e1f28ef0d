import { z } from "zod";
import {
  GetCommand,
  QueryCommand,
  TransactWriteCommand,
  UpdateCommand,
  type DynamoDBDocumentClient,
  type GetCommandOutput,
  type QueryCommandOutput,
} from "@aws-sdk/lib-dynamodb";
import { CHECKPOINTS_TABLE } from "./table-schemas.ts";
import { CheckpointNotFoundError } from "./errors.ts";
import { conditionalWrite, request, transactWrite } from "./dynamo-requests.ts";
import { activeUpdateCheck, readActiveUpdate } from "./dynamo-pipelines-repository.ts";
import {
  ROOT_SEQ,
  flowKey,
  requireFencePort,
  type Checkpoint,
  type CheckpointPage,
  CHECKPOINT_STATUSES,
  type CheckpointsRepository,
  type CommitRequest,
  type CommitResult,
  type FlowHead,
  type FlowResume,
  type FlowRef,
  type Fenced,
  type MoveHeadOptions,
  type MoveHeadResult,
  type PlanRequest,
  type PlanResult,
} from "./checkpoints-repository.ts";

/**
 * Checkpoints on DynamoDB, keyed `flowKey` (`<pipelineId>#<flowId>`) + `seq`: one item per batch
 * (seq >= 1) and the flow's HEAD item at seq 0 (`headSeq` names the live checkpoint). Offsets are
 * kept as JSON text so they read back exactly (no number or set conversion). A fenced write adds a
 * ConditionCheck on the pipeline's item in the Pipelines table to its transaction.
 *
 * Resuming a flow is one GetItem: the HEAD item also holds a copy of HEAD's checkpoint (written by
 * the transaction that moves HEAD there; a checkpoint never changes once committed) and the highest
 * seq planned (written by the transaction that plans it, and by each HEAD move). When nothing was
 * planned above HEAD, that item is the whole answer; otherwise, or for a HEAD item written before
 * it held them, the checkpoints from HEAD up are queried as well.
 */

const PARTITION = CHECKPOINTS_TABLE.partitionKey;
const SORT = CHECKPOINTS_TABLE.sortKey;
const DEFAULT_PAGE_SIZE = 100;

/** A checkpoint's item as stored: parsed on every read, as items written by an earlier Ebb may differ. */
const BatchMeasuresSchema = z.record(z.string(), z.number());
const CheckpointItemSchema = z.object({
  flowKey: z.string(),
  seq: z.number(),
  pipelineId: z.string(),
  flowId: z.string(),
  parent: z.number(),
  checkpointStatus: z.enum(CHECKPOINT_STATUSES),
  offsetsJson: z.string(),
  stateRef: z.string().optional(),
  updateId: z.string().optional(),
  plannedAt: z.number(),
  tableVersion: z.number().optional(),
  committedAt: z.number().optional(),
  stateVersion: z.string().optional(),
  batchSize: BatchMeasuresSchema.optional(),
  learnedBound: BatchMeasuresSchema.optional(),
  oversized: z.string().optional(),
  replayUntilJson: z.string().optional(),
  outgrewDuckDb: z.string().optional(),
});
type CheckpointItem = z.infer<typeof CheckpointItemSchema>;

/** The flow's HEAD item (seq 0). */
const HeadItemSchema = z.object({
  flowKey: z.string(),
  seq: z.literal(ROOT_SEQ),
  /** Absent until HEAD first moves (a flow whose first batch is only planned). */
  headSeq: z.number().optional(),
  movedAt: z.number().optional(),
  /** The highest seq planned at the last `moveHead` (absent: never moved). */
  abandonedThrough: z.number().optional(),
  /** The highest seq planned, on any branch (absent on items written before it was kept). */
  plannedThrough: z.number().optional(),
  /** A copy of the checkpoint at `headSeq` (absent at the root, and on older items). */
  headCheckpoint: CheckpointItemSchema.optional(),
});
type HeadItem = z.infer<typeof HeadItemSchema>;

/** Offsets, stored as JSON text of an object. */
const OffsetsSchema = z.record(z.string(), z.unknown());

export interface DynamoCheckpointsRepositoryOptions {
  readonly client: DynamoDBDocumentClient;
  readonly tableName: string;
  /** The Pipelines table, where a fenced write checks the pipeline's active update. */
  readonly pipelinesTableName?: string;
  /** Epoch milliseconds. @default Date.now */
  readonly now?: () => number;
}

export class DynamoCheckpointsRepository implements CheckpointsRepository {
  private readonly client: DynamoDBDocumentClient;
  private readonly table: string;
  private readonly pipelinesTable: string | undefined;
  private readonly now: () => number;

  constructor(options: DynamoCheckpointsRepositoryOptions) {
    this.client = options.client;
    this.table = options.tableName;
    this.pipelinesTable = options.pipelinesTableName;
    this.now = options.now ?? Date.now;
  }

  async head(flow: FlowRef): Promise<FlowHead> {
    const headItem = await this.headItem(flow);
    const seq = headItem?.headSeq ?? ROOT_SEQ;
    if (seq === ROOT_SEQ) return { seq };
    const copy = headItem?.headCheckpoint;
    if (copy?.seq === seq) return { seq, checkpoint: toCheckpoint(copy) };
    const checkpoint = await this.get(flow, seq);
    return checkpoint ? { seq, checkpoint } : { seq };
  }

  async resume(flow: FlowRef): Promise<FlowResume> {
    const headItem = await this.headItem(flow);
    const seq = headItem?.headSeq ?? ROOT_SEQ;
    const abandonedThrough = headItem?.abandonedThrough ?? ROOT_SEQ;
    const copy = headItem?.headCheckpoint;
    const copied = seq === ROOT_SEQ ? copy === undefined : copy?.seq === seq;
    if (copied && headItem?.plannedThrough !== undefined && headItem.plannedThrough <= seq) {
      const head = copy ? { seq, checkpoint: toCheckpoint(copy) } : { seq };
      return { head, after: [], abandonedThrough };
    }
    // One scan from HEAD's own checkpoint, or from above it when the HEAD item holds its copy (seq
    // 0, the HEAD item, is never a checkpoint).
    const scanned: Checkpoint[] = [];
    let afterSeq: number | undefined = seq === ROOT_SEQ || copied ? seq : seq - 1;
    while (afterSeq !== undefined) {
      const page = await this.list(flow, { afterSeq });
      scanned.push(...page.checkpoints);
      afterSeq = page.nextAfterSeq;
    }
    const checkpoint =
      seq === ROOT_SEQ ? undefined : copied && copy ? toCheckpoint(copy) : scanned.find((c) => c.seq === seq);
    return {
      head: checkpoint ? { seq, checkpoint } : { seq },
      after: scanned.filter((c) => c.seq > seq),
      abandonedThrough,
    };
  }

  async plan(flow: FlowRef, planned: PlanRequest): Promise<PlanResult> {
    const seq = (await this.maxSeq(flow)) + 1;
    const item: CheckpointItem = {
      flowKey: flowKey(flow),
      seq,
      pipelineId: flow.pipelineId,
      flowId: flow.flowId,
      parent: planned.parent,
      checkpointStatus: "PLANNED",
      offsetsJson: JSON.stringify(planned.offsets),
      ...(planned.stateRef !== undefined ? { stateRef: planned.stateRef } : {}),
      ...(planned.updateId !== undefined ? { updateId: planned.updateId } : {}),
      ...(planned.size !== undefined ? { batchSize: planned.size } : {}),
      ...(planned.learnedBound !== undefined ? { learnedBound: planned.learnedBound } : {}),
      ...(planned.replayUntil !== undefined ? { replayUntilJson: JSON.stringify(planned.replayUntil) } : {}),
      ...(planned.outgrewDuckDb !== undefined ? { outgrewDuckDb: planned.outgrewDuckDb } : {}),
      plannedAt: this.now(),
    };
    // Write-ahead: the put holds only if no one has taken this seq, so a seq is planned once; the
    // HEAD item learns the seq in the same transaction.
    const put = { TableName: this.table, Item: item, ConditionExpression: `attribute_not_exists(${SORT})` };
    const plannedThrough = {
      Update: {
        TableName: this.table,
        Key: { [PARTITION]: flowKey(flow), [SORT]: ROOT_SEQ },
        UpdateExpression: "SET plannedThrough = :seq",
        ExpressionAttributeValues: { ":seq": seq },
      },
    };
    const result = await transactWrite(() =>
      this.client.send(
        new TransactWriteCommand({
          TransactItems: [{ Put: put }, plannedThrough, ...this.fences(flow, planned.activeUpdateId)],
        }),
      ),
    );
    if (result.ok) return { outcome: "planned", checkpoint: toCheckpoint(item) };
    if (result.failedConditions.includes(2)) return this.fenced(flow);
    return { outcome: "seq-taken", seq };
  }

  async markOversized(flow: FlowRef, seq: number, reason: string): Promise<boolean> {
    const result = await conditionalWrite(() =>
      this.client.send(
        new UpdateCommand({
          TableName: this.table,
          Key: { [PARTITION]: flowKey(flow), [SORT]: seq },
          UpdateExpression: "SET oversized = :reason",
          ConditionExpression: "checkpointStatus = :planned",
          ExpressionAttributeValues: { ":reason": reason, ":planned": "PLANNED" },
        }),
      ),
    );
    return result.written;
  }

  async commit(flow: FlowRef, seq: number, committed: CommitRequest): Promise<CommitResult> {
    const planned = await this.get(flow, seq);
    if (!planned) throw new CheckpointNotFoundError(flowKey(flow), seq);
    if (planned.status === "COMMITTED") return { outcome: "already-committed", checkpoint: planned };
    const checkpoint: Checkpoint = {
      ...planned,
      status: "COMMITTED",
      tableVersion: committed.tableVersion,
      committedAt: committed.committedAt,
      ...(committed.stateVersion !== undefined ? { stateVersion: committed.stateVersion } : {}),
    };

    const result = await transactWrite(() =>
      this.client.send(
        new TransactWriteCommand({
          TransactItems: [
            {
              Update: {
                TableName: this.table,
                Key: { [PARTITION]: flowKey(flow), [SORT]: seq },
                UpdateExpression:
                  "SET checkpointStatus = :committed, tableVersion = :version, committedAt = :at" +
                  (committed.stateVersion !== undefined ? ", stateVersion = :state" : ""),
                ConditionExpression: "checkpointStatus = :planned",
                ExpressionAttributeValues: {
                  ":committed": "COMMITTED",
                  ":planned": "PLANNED",
                  ":version": committed.tableVersion,
                  ":at": committed.committedAt,
                  ...(committed.stateVersion !== undefined ? { ":state": committed.stateVersion } : {}),
                },
              },
            },
            this.headUpdate(flow, seq, planned.parent, { copy: toItem(checkpoint) }),
            ...this.fences(flow, committed.activeUpdateId),
          ],
        }),
      ),
    );
    if (result.ok) return { outcome: "committed", checkpoint };
    if (result.failedConditions.includes(0)) {
      // Committed by a concurrent retry of the same step between the read and the transaction.
      const now = await this.get(flow, seq);
      if (now?.status === "COMMITTED") return { outcome: "already-committed", checkpoint: now };
    }
    if (result.failedConditions.includes(2)) return this.fenced(flow);
    return { outcome: "head-moved", head: await this.headSeq(flow) };
  }

  async get(flow: FlowRef, seq: number): Promise<Checkpoint | undefined> {
    if (seq === ROOT_SEQ) return undefined;
    const output: GetCommandOutput = await request(() =>
      this.client.send(
        new GetCommand({
          TableName: this.table,
          Key: { [PARTITION]: flowKey(flow), [SORT]: seq },
          ConsistentRead: true,
        }),
      ),
    );
    return output.Item && toCheckpoint(CheckpointItemSchema.parse(output.Item));
  }

  async list(
    flow: FlowRef,
    page: { readonly afterSeq?: number; readonly limit?: number } = {},
  ): Promise<CheckpointPage> {
    const input = {
      TableName: this.table,
      KeyConditionExpression: `${PARTITION} = :flow AND ${SORT} > :after`,
      ExpressionAttributeValues: { ":flow": flowKey(flow), ":after": page.afterSeq ?? ROOT_SEQ },
      ConsistentRead: true,
      Limit: page.limit ?? DEFAULT_PAGE_SIZE,
    };
    const output: QueryCommandOutput = await request(() => this.client.send(new QueryCommand(input)));
    const checkpoints = (output.Items ?? []).map((item) => toCheckpoint(CheckpointItemSchema.parse(item)));
    const last = checkpoints[checkpoints.length - 1];
    return { checkpoints, ...(output.LastEvaluatedKey && last ? { nextAfterSeq: last.seq } : {}) };
  }

  async moveHead(flow: FlowRef, seq: number, options: MoveHeadOptions = {}): Promise<MoveHeadResult> {
    // Only the active update plans, and it does not plan while it moves HEAD: nothing is planned
    // between this read and the transaction.
    const [abandonedThrough, target] = await Promise.all([this.maxSeq(flow), this.get(flow, seq)]);
    // A target that is not committed fails the transaction's check below: no copy to keep then.
    const copy = target?.status === "COMMITTED" ? toItem(target) : undefined;
    const headUpdate = this.headUpdate(flow, seq, options.expectedHead, {
      abandonedThrough,
      ...(copy ? { copy } : {}),
    });
    const items = [
      headUpdate,
      ...this.fences(flow, options.activeUpdateId),
      ...(seq === ROOT_SEQ
        ? []
        : [
            {
              ConditionCheck: {
                TableName: this.table,
                Key: { [PARTITION]: flowKey(flow), [SORT]: seq },
                ConditionExpression: "checkpointStatus = :committed",
                ExpressionAttributeValues: { ":committed": "COMMITTED" },
              },
            },
          ]),
    ];
    const result = await transactWrite(() =>
      this.client.send(new TransactWriteCommand({ TransactItems: items })),
    );
    if (result.ok) return { outcome: "moved" };
    const fenced = options.activeUpdateId !== undefined;
    if (fenced && result.failedConditions.includes(1)) return this.fenced(flow);
    if (result.failedConditions.includes(0)) return { outcome: "head-moved", head: await this.headSeq(flow) };
    return { outcome: "not-committed", seq };
  }

  async latestCommittedAtOrBefore(flow: FlowRef, time: number): Promise<Checkpoint | undefined> {
    let latest: Checkpoint | undefined;
    let startKey: Record<string, unknown> | undefined;
    do {
      const input = {
        TableName: this.table,
        KeyConditionExpression: `${PARTITION} = :flow AND ${SORT} > :root`,
        FilterExpression: "checkpointStatus = :committed AND committedAt <= :time",
        ExpressionAttributeValues: {
          ":flow": flowKey(flow),
          ":root": ROOT_SEQ,
          ":committed": "COMMITTED",
          ":time": time,
        },
        ConsistentRead: true,
        ...(startKey ? { ExclusiveStartKey: startKey } : {}),
      };
      const output: QueryCommandOutput = await request(() => this.client.send(new QueryCommand(input)));
      for (const item of output.Items ?? []) {
        const checkpoint = toCheckpoint(CheckpointItemSchema.parse(item));
        const later =
          latest === undefined ||
          (checkpoint.committedAt ?? 0) > (latest.committedAt ?? 0) ||
          ((checkpoint.committedAt ?? 0) === (latest.committedAt ?? 0) && checkpoint.seq > latest.seq);
        if (later) latest = checkpoint;
      }
      startKey = output.LastEvaluatedKey;
    } while (startKey);
    return latest;
  }

  /** The ConditionCheck that `activeUpdateId` is the flow's pipeline's active update. */
  private fence(flow: FlowRef, activeUpdateId: string) {
    return activeUpdateCheck(requireFencePort(this.pipelinesTable), flow.pipelineId, activeUpdateId);
  }

  private fences(flow: FlowRef, activeUpdateId: string | undefined) {
    return activeUpdateId === undefined ? [] : [this.fence(flow, activeUpdateId)];
  }

  private async fenced(flow: FlowRef): Promise<Fenced> {
    const active = await readActiveUpdate(this.client, this.pipelinesTable as string, flow.pipelineId);
    return { outcome: "fenced", ...(active ? { activeUpdateId: active } : {}) };
  }

  /**
   * Sets HEAD to `seq` with `copy`, its checkpoint (none at the root, or when unknown: a stale copy is
   * removed); with `expected`, only if HEAD is there now (an absent HEAD is at the root); with
   * `abandonedThrough` (the highest seq planned), a move that abandons the batches planned so far.
   */
  private headUpdate(
    flow: FlowRef,
    seq: number,
    expected: number | undefined,
    moved: { readonly abandonedThrough?: number; readonly copy?: CheckpointItem } = {},
  ) {
    const condition =
      expected === undefined
        ? undefined
        : expected === ROOT_SEQ
          ? "attribute_not_exists(headSeq) OR headSeq = :expected"
          : "headSeq = :expected";
    const { abandonedThrough, copy } = moved;
    const sets = ["headSeq = :seq", "movedAt = :now"];
    if (abandonedThrough !== undefined)
      sets.push("abandonedThrough = :abandoned", "plannedThrough = :abandoned");
    if (copy) sets.push("headCheckpoint = :copy");
    return {
      Update: {
        TableName: this.table,
        Key: { [PARTITION]: flowKey(flow), [SORT]: ROOT_SEQ },
        UpdateExpression: `SET ${sets.join(", ")}${copy ? "" : " REMOVE headCheckpoint"}`,
        ...(condition ? { ConditionExpression: condition } : {}),
        ExpressionAttributeValues: {
          ":seq": seq,
          ":now": this.now(),
          ...(expected !== undefined ? { ":expected": expected } : {}),
          ...(abandonedThrough !== undefined ? { ":abandoned": abandonedThrough } : {}),
          ...(copy ? { ":copy": copy } : {}),
        },
      },
    };
  }

  private async headSeq(flow: FlowRef): Promise<number> {
    return (await this.headItem(flow))?.headSeq ?? ROOT_SEQ;
  }

  private async headItem(flow: FlowRef): Promise<HeadItem | undefined> {
    const output: GetCommandOutput = await request(() =>
      this.client.send(
        new GetCommand({
          TableName: this.table,
          Key: { [PARTITION]: flowKey(flow), [SORT]: ROOT_SEQ },
          ConsistentRead: true,
        }),
      ),
    );
    return output.Item && HeadItemSchema.parse(output.Item);
  }

  /** The highest batch seq ever planned for the flow, on any branch; 0 if none. */
  private async maxSeq(flow: FlowRef): Promise<number> {
    const input = {
      TableName: this.table,
      KeyConditionExpression: `${PARTITION} = :flow AND ${SORT} > :root`,
      ExpressionAttributeValues: { ":flow": flowKey(flow), ":root": ROOT_SEQ },
      ScanIndexForward: false,
      Limit: 1,
      ConsistentRead: true,
      ProjectionExpression: SORT,
    };
    const output: QueryCommandOutput = await request(() => this.client.send(new QueryCommand(input)));
    return (output.Items?.[0]?.[SORT] as number | undefined) ?? ROOT_SEQ;
  }
}

/** The item of a checkpoint (`toCheckpoint`'s inverse): the HEAD item's copy of HEAD's checkpoint. */
function toItem(checkpoint: Checkpoint): CheckpointItem {
  return {
    flowKey: flowKey(checkpoint.flow),
    seq: checkpoint.seq,
    pipelineId: checkpoint.flow.pipelineId,
    flowId: checkpoint.flow.flowId,
    parent: checkpoint.parent,
    checkpointStatus: checkpoint.status,
    offsetsJson: JSON.stringify(checkpoint.offsets),
    ...(checkpoint.stateRef !== undefined ? { stateRef: checkpoint.stateRef } : {}),
    ...(checkpoint.updateId !== undefined ? { updateId: checkpoint.updateId } : {}),
    plannedAt: checkpoint.plannedAt,
    ...(checkpoint.tableVersion !== undefined ? { tableVersion: checkpoint.tableVersion } : {}),
    ...(checkpoint.committedAt !== undefined ? { committedAt: checkpoint.committedAt } : {}),
    ...(checkpoint.stateVersion !== undefined ? { stateVersion: checkpoint.stateVersion } : {}),
    ...(checkpoint.size !== undefined ? { batchSize: checkpoint.size } : {}),
    ...(checkpoint.learnedBound !== undefined ? { learnedBound: checkpoint.learnedBound } : {}),
    ...(checkpoint.replayUntil !== undefined
      ? { replayUntilJson: JSON.stringify(checkpoint.replayUntil) }
      : {}),
    ...(checkpoint.outgrewDuckDb !== undefined ? { outgrewDuckDb: checkpoint.outgrewDuckDb } : {}),
  };
}

function toCheckpoint(item: CheckpointItem): Checkpoint {
  return {
    flow: { pipelineId: item.pipelineId, flowId: item.flowId },
    seq: item.seq,
    parent: item.parent,
    status: item.checkpointStatus,
    offsets: OffsetsSchema.parse(JSON.parse(item.offsetsJson)),
    ...(item.stateRef !== undefined ? { stateRef: item.stateRef } : {}),
    ...(item.updateId !== undefined ? { updateId: item.updateId } : {}),
    plannedAt: item.plannedAt,
    ...(item.tableVersion !== undefined ? { tableVersion: item.tableVersion } : {}),
    ...(item.committedAt !== undefined ? { committedAt: item.committedAt } : {}),
    ...(item.stateVersion !== undefined ? { stateVersion: item.stateVersion } : {}),
    ...(item.batchSize !== undefined ? { size: item.batchSize } : {}),
    ...(item.learnedBound !== undefined ? { learnedBound: item.learnedBound } : {}),
    ...(item.oversized !== undefined ? { oversized: item.oversized } : {}),
    ...(item.replayUntilJson !== undefined
      ? { replayUntil: OffsetsSchema.parse(JSON.parse(item.replayUntilJson)) }
      : {}),
    ...(item.outgrewDuckDb !== undefined ? { outgrewDuckDb: item.outgrewDuckDb } : {}),
  };
}
