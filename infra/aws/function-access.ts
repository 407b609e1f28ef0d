/**
 * What each Lambda function may touch: the single source for both its environment variables and its
 * IAM grants (`resource-bindings.ts` sets the two together, so they cannot drift). Least privilege:
 * a function gets exactly the tables, bucket prefixes and state-machine actions it uses.
 */

import type { STATE_PREFIX, STATEMENTS_PREFIX, TABLES_PREFIX } from "../../shared/store/bucket-layout.ts";

export type TableRole = "pipelines" | "updates" | "checkpoints" | "eventLog";
export type Access = "read" | "readWrite";
/** Prefixes of the bucket (architecture.md "Storage"). */
export type BucketPrefix = typeof TABLES_PREFIX | typeof STATE_PREFIX | typeof STATEMENTS_PREFIX;

export interface FunctionAccess {
  readonly tables?: Readonly<Partial<Record<TableRole, Access>>>;
  readonly bucket?: Readonly<Partial<Record<BucketPrefix, Access>>>;
  readonly stateMachine?: readonly ("start" | "stop")[];
  /** The state machine's task functions and the schedule run DuckDB over data: more memory and time. */
  readonly heavy?: boolean;
  /** Reads the pipelines' event streams (`EbbProps.eventStreams`): their grants, and MSK's VPC. */
  readonly eventStreams?: boolean;
  /** Puts lifecycle events on Ebb's event bus (docs/events.md): `events:PutEvents` on that bus only. */
  readonly lifecycleEvents?: boolean;
}

const RW = "readWrite" as const;

/** Everything a state-machine task may do: it runs the engine and the rewind. Tasks that end a stage add `lifecycleEvents`. */
export const TASK_ACCESS: FunctionAccess = {
  tables: { pipelines: RW, updates: RW, checkpoints: RW, eventLog: RW },
  bucket: { "tables/": RW, "state/": RW },
  heavy: true,
  eventStreams: true,
};
