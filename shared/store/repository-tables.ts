/** The physical names of the repositories' DynamoDB tables (set by the CDK stack, or the local runtime). */
export interface RepositoryTables {
  readonly pipelines: string;
  readonly updates: string;
  readonly checkpoints: string;
  readonly eventLog: string;
}

/** The environment variables a function reads its table names from; the CDK stack sets them. */
export const TABLE_ENVIRONMENT = {
  pipelines: "EBB_PIPELINES_TABLE",
  updates: "EBB_UPDATES_TABLE",
  checkpoints: "EBB_CHECKPOINTS_TABLE",
  eventLog: "EBB_EVENT_LOG_TABLE",
} as const satisfies Record<keyof RepositoryTables, string>;
