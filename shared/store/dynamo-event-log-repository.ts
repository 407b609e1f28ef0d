import {
  BatchWriteCommand,
  GetCommand,
  PutCommand,
  type DynamoDBDocumentClient,
  type GetCommandOutput,
} from "@aws-sdk/lib-dynamodb";
import { z } from "zod";
import { EVENT_LOG_TABLE } from "./table-schemas.ts";
import { InvalidPageTokenError } from "./errors.ts";
import { batchWriteAll, request } from "./dynamo-requests.ts";
import { dynamoWrite } from "./dynamo-store-writes.ts";
import type { StoreWrite } from "./store-writes.ts";
import { queryPage, type Page, type PagedQuery } from "./query-pages.ts";
import { TimeOrderedIds, timeOfId } from "./time-ordered-id.ts";
import {
  DEFAULT_EVENT_RETENTION_MS,
  EVENT_LEVELS,
  MATURITY_LEVELS,
  type EventLogRepository,
  type EventPageRequest,
  type EventQuery,
  type NewEvent,
  type PipelineEvent,
  type TimeRange,
} from "./event-log-repository.ts";

/**
 * The event log on DynamoDB: `pipelineId` + `sk = <ISO timestamp>#<event id>`, so a pipeline's events
 * sort by time; `pipelineEventType = <pipelineId>#<event_type>` + `timestamp` feed the `byEventType`
 * index; `expiresAt` (epoch seconds) is the TTL. The event itself is kept as JSON text; the few fields
 * queries filter on are copied to attributes.
 *
 * An event id is time-ordered and made from the event's own timestamp, so `get` rebuilds the sort key
 * from the id and reads one item: no index by id is needed.
 */

const PARTITION = EVENT_LOG_TABLE.partitionKey;
const SORT = EVENT_LOG_TABLE.sortKey;
const TYPE_KEY = EVENT_LOG_TABLE.eventTypeKey;
const TIME_KEY = EVENT_LOG_TABLE.timestampKey;
const TTL = EVENT_LOG_TABLE.ttlAttribute;
/** Sorts after every `<ISO>#<id>` with that ISO prefix (ids are base32). */
const AFTER_ANY_ID = "#\uffff";
/** BatchWriteItem's limit. */
const BATCH_WRITE_SIZE = 25;
/** The latest time a 24-character ISO string can show. */
const LATEST_MS = Date.UTC(9999, 11, 31, 23, 59, 59, 999);

interface EventItem {
  readonly pipelineId: string;
  readonly sk: string;
  readonly pipelineEventType: string;
  readonly timestamp: string;
  readonly expiresAt: number;
  readonly level: string;
  readonly updateId: string;
  readonly datasetName?: string;
  readonly body: string;
}

export interface DynamoEventLogRepositoryOptions {
  readonly client: DynamoDBDocumentClient;
  readonly tableName: string;
  /** Epoch milliseconds. @default Date.now */
  readonly now?: () => number;
}

export class DynamoEventLogRepository implements EventLogRepository {
  private readonly client: DynamoDBDocumentClient;
  private readonly table: string;
  private readonly now: () => number;
  private lastSequence = 0;
  private readonly ids = new TimeOrderedIds();

  constructor(options: DynamoEventLogRepositoryOptions) {
    this.client = options.client;
    this.table = options.tableName;
    this.now = options.now ?? Date.now;
  }

  async append(event: NewEvent): Promise<PipelineEvent> {
    const { stored, item } = this.toItem(event);
    await request(() => this.client.send(new PutCommand({ TableName: this.table, Item: item })));
    return stored;
  }

  async appendAll(events: readonly NewEvent[]): Promise<PipelineEvent[]> {
    const built = events.map((event) => this.toItem(event));
    for (let i = 0; i < built.length; i += BATCH_WRITE_SIZE) {
      const items = built.slice(i, i + BATCH_WRITE_SIZE).map(({ item }) => ({ PutRequest: { Item: item } }));
      await batchWriteAll(`event(s) of ${this.table}`, items, async (batch) => {
        const output = await this.client.send(
          new BatchWriteCommand({ RequestItems: { [this.table]: batch } }),
        );
        return { unprocessed: output.UnprocessedItems?.[this.table] as typeof batch | undefined };
      });
    }
    return built.map(({ stored }) => stored);
  }

  appendWrites(events: readonly NewEvent[]): StoreWrite[] {
    return events.map((event) =>
      dynamoWrite({ Put: { TableName: this.table, Item: this.toItem(event).item } }),
    );
  }

  private toItem(event: NewEvent): { stored: PipelineEvent; item: EventItem } {
    const time = event.timestamp ?? this.now();
    const stored: PipelineEvent = {
      id: this.ids.next(time),
      sequence: { control_plane_seq_no: this.nextSequence(time) },
      origin: event.origin,
      timestamp: new Date(time).toISOString(),
      message: event.message,
      level: event.level,
      maturity_level: event.maturity_level ?? "STABLE",
      ...(event.error ? { error: event.error } : {}),
      event_type: event.event_type,
      details: event.details,
    };
    const pipelineId = event.origin.pipeline_id;
    const item: EventItem = {
      pipelineId,
      sk: sortKey(stored.timestamp, stored.id),
      pipelineEventType: `${pipelineId}#${stored.event_type}`,
      timestamp: stored.timestamp,
      expiresAt: Math.ceil((time + (event.retentionMs ?? DEFAULT_EVENT_RETENTION_MS)) / 1000),
      level: stored.level,
      updateId: stored.origin.update_id,
      ...(stored.origin.dataset_name !== undefined ? { datasetName: stored.origin.dataset_name } : {}),
      body: JSON.stringify(stored),
    };
    return { stored, item };
  }

  async get(pipelineId: string, id: string): Promise<PipelineEvent | undefined> {
    const time = timeOfId(id);
    if (time === undefined || time > LATEST_MS) return undefined;
    const output: GetCommandOutput = await request(() =>
      this.client.send(
        new GetCommand({
          TableName: this.table,
          Key: { [PARTITION]: pipelineId, [SORT]: sortKey(new Date(time).toISOString(), id) },
          ConsistentRead: true,
        }),
      ),
    );
    const item = output.Item as EventItem | undefined;
    return item && item.expiresAt > this.nowSeconds() ? toEvent(item) : undefined;
  }

  async query(pipelineId: string, query: EventQuery, page: EventPageRequest): Promise<Page<PipelineEvent>> {
    const resumed = page.pageToken === undefined ? undefined : readToken(page.pageToken);
    const effective = resumed?.query ?? query;
    const result = await queryPage(this.client, this.pagedQuery(pipelineId, effective), {
      limit: page.limit,
      ...(resumed ? { pageToken: resumed.inner } : {}),
    });
    const wrap = (inner: string | undefined) => inner && writeToken({ query: effective, inner });
    const next = wrap(result.nextPageToken);
    const prev = wrap(result.prevPageToken);
    return {
      items: result.items.map((item) => toEvent(item as unknown as EventItem)),
      ...(next ? { nextPageToken: next } : {}),
      ...(prev ? { prevPageToken: prev } : {}),
    };
  }

  private pagedQuery(pipelineId: string, query: EventQuery): PagedQuery {
    const { from, to } = inclusiveBounds(query.range ?? {});
    const filters = [`${TTL} > :now`];
    const values: Record<string, unknown> = { ":now": this.nowSeconds() };
    if (query.levels && query.levels.length > 0) {
      query.levels.forEach((level, i) => (values[`:level${i}`] = level));
      filters.push(`#level IN (${query.levels.map((_, i) => `:level${i}`).join(", ")})`);
    }
    if (query.updateId !== undefined) {
      filters.push("updateId = :updateId");
      values[":updateId"] = query.updateId;
    }
    if (query.datasetName !== undefined) {
      filters.push("datasetName = :datasetName");
      values[":datasetName"] = query.datasetName;
    }
    const names: Record<string, string> =
      query.levels && query.levels.length > 0 ? { "#level": "level" } : {};
    const common = {
      TableName: this.table,
      FilterExpression: filters.join(" AND "),
      ...(Object.keys(names).length > 0 ? { ExpressionAttributeNames: names } : {}),
    };
    const scope = `events/${pipelineId}/${JSON.stringify(query)}`;
    const order = query.order ?? "desc";
    if (query.eventType !== undefined) {
      return {
        input: {
          ...common,
          IndexName: EVENT_LOG_TABLE.byEventTypeIndex,
          KeyConditionExpression: `${TYPE_KEY} = :type AND #time BETWEEN :from AND :to`,
          ExpressionAttributeNames: { ...names, "#time": TIME_KEY },
          ExpressionAttributeValues: {
            ...values,
            ":type": `${pipelineId}#${query.eventType}`,
            ":from": iso(from),
            ":to": iso(to),
          },
        },
        order,
        keyAttributes: [PARTITION, SORT, TYPE_KEY, TIME_KEY],
        scope,
      };
    }
    return {
      input: {
        ...common,
        KeyConditionExpression: `${PARTITION} = :pipeline AND ${SORT} BETWEEN :from AND :to`,
        ExpressionAttributeValues: {
          ...values,
          ":pipeline": pipelineId,
          ":from": iso(from),
          ":to": iso(to) + AFTER_ANY_ID,
        },
        ConsistentRead: true,
      },
      order,
      keyAttributes: [PARTITION, SORT],
      scope,
    };
  }

  /** Epoch ms × 1000 plus a counter, increasing within this process even when the clock stalls. */
  private nextSequence(time: number): number {
    this.lastSequence = Math.max(this.lastSequence + 1, time * 1000);
    return this.lastSequence;
  }

  private nowSeconds(): number {
    return Math.floor(this.now() / 1000);
  }
}

function sortKey(isoTimestamp: string, id: string): string {
  return `${isoTimestamp}#${id}`;
}

function iso(ms: number): string {
  return new Date(ms).toISOString();
}

/** Timestamps have millisecond resolution, so "after t" is "at or after t + 1 ms". */
function inclusiveBounds(range: TimeRange): { from: number; to: number } {
  const lower = [range.atOrAfter, range.after === undefined ? undefined : range.after + 1].filter(
    (v): v is number => v !== undefined,
  );
  const upper = [range.atOrBefore, range.before === undefined ? undefined : range.before - 1].filter(
    (v): v is number => v !== undefined,
  );
  return { from: Math.max(0, ...lower), to: Math.min(LATEST_MS, ...upper) };
}

/** An event as stored (its JSON body), checked on the way back in. */
const eventSchema = z.object({
  id: z.string(),
  sequence: z.object({ control_plane_seq_no: z.number() }),
  origin: z.object({
    pipeline_id: z.string(),
    pipeline_name: z.string(),
    update_id: z.string(),
    flow_id: z.string().optional(),
    flow_name: z.string().optional(),
    dataset_name: z.string().optional(),
    batch_id: z.number().optional(),
    branch: z.string().optional(),
  }),
  timestamp: z.string(),
  message: z.string(),
  level: z.enum(EVENT_LEVELS),
  maturity_level: z.enum(MATURITY_LEVELS),
  error: z
    .object({
      exceptions: z.array(
        z.object({ class_name: z.string(), message: z.string(), stack: z.string().optional() }),
      ),
      fatal: z.boolean(),
    })
    .optional(),
  event_type: z.string(),
  details: z.record(z.string(), z.unknown()),
}) satisfies z.ZodType<PipelineEvent>;

function toEvent(item: EventItem): PipelineEvent {
  return eventSchema.parse(JSON.parse(item.body));
}

interface EventToken {
  readonly query: EventQuery;
  readonly inner: string;
}

function writeToken(token: EventToken): string {
  return Buffer.from(JSON.stringify(token)).toString("base64url");
}

/** The inner token is bound to the pipeline and the query, so a tampered query is refused there. */
function readToken(token: string): EventToken {
  try {
    const parsed = JSON.parse(Buffer.from(token, "base64url").toString("utf8")) as Partial<EventToken> | null;
    if (
      parsed &&
      typeof parsed === "object" &&
      typeof parsed.query === "object" &&
      parsed.query !== null &&
      typeof parsed.inner === "string"
    ) {
      return { query: parsed.query, inner: parsed.inner };
    }
  } catch {
    // fall through
  }
  throw new InvalidPageTokenError(token);
}
