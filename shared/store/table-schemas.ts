/**
 * Key schemas of Ebb's DynamoDB tables: the single source for the CDK stack, the repositories and the
 * local provisioning (which reads them back out of the synthesized template).
 */
export const PIPELINES_TABLE = {
  partitionKey: "pipelineId",
} as const;

export const UPDATES_TABLE = {
  partitionKey: "pipelineId",
  /** Time-ordered update id, so a query lists a pipeline's updates oldest or newest first. */
  sortKey: "updateId",
} as const;

export const CHECKPOINTS_TABLE = {
  /** `<pipelineId>#<flowId>`. */
  partitionKey: "flowKey",
  /** Micro-batch sequence number; never reused. */
  sortKey: "seq",
} as const;

export const EVENT_LOG_TABLE = {
  partitionKey: "pipelineId",
  /** `<ISO timestamp>#<event id>`: time-ordered and unique. */
  sortKey: "sk",
  byEventTypeIndex: "byEventType",
  /** `<pipelineId>#<event_type>`. */
  eventTypeKey: "pipelineEventType",
  timestampKey: "timestamp",
  /** Epoch seconds after which DynamoDB deletes the event. */
  ttlAttribute: "expiresAt",
} as const;
