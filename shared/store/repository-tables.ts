import { StoreConfigurationError } from "./errors.ts";

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

/** Reads every table name once, failing with the names of all the variables that are missing. */
export function tablesFromEnv(env: NodeJS.ProcessEnv = process.env): RepositoryTables {
  const missing = Object.values(TABLE_ENVIRONMENT).filter((variable) => !env[variable]);
  if (missing.length > 0) {
    throw new StoreConfigurationError(
      `missing environment variable${missing.length === 1 ? "" : "s"} ${missing.join(", ")}: set the DynamoDB table names`,
    );
  }
  const read = (key: keyof RepositoryTables): string => env[TABLE_ENVIRONMENT[key]] as string;
  return {
    pipelines: read("pipelines"),
    updates: read("updates"),
    checkpoints: read("checkpoints"),
    eventLog: read("eventLog"),
  };
}
