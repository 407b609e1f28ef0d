/**
 * The operator state store (architecture.md "Storage": `state/<pipelineId>/<flowId>/`): keyed rows
 * per flow, versioned with the flow's checkpoints. A batch reads the version its parent checkpoint
 * names and writes a new immutable one, which its checkpoint names; a rewind moves HEAD and so
 * restores the state with it.
 */
export {
  openStateVersion,
  StateTable,
  StateVersion,
  StateWriter,
  type OpenStateRequest,
  type StateSql,
  type TableOptions,
} from "./state-store.ts";
export {
  type StateColumn,
  type StateSchema,
  DELETED_COLUMN,
  describeSchema,
  sameSchema,
} from "./state-schema.ts";
export {
  DEFAULT_BUCKETS,
  SNAPSHOT_EVERY,
  STATE_FORMAT,
  manifestFiles,
  manifestMetrics,
  type StateManifest,
  type StateMetrics,
} from "./state-manifest.ts";
export { isFlowStateKey, type StateFlow } from "./state-keys.ts";
export {
  planStateVacuum,
  liveStateFiles,
  vacuumFlowState,
  STATE_RETENTION_MS,
  type StateVacuumPlan,
} from "./state-vacuum.ts";
export {
  CheckpointNotFoundError,
  FlowNotFoundError,
  FlowWithoutStateError,
  IncompatibleStateError,
  StateError,
  StateFormatError,
  StateVersionMissingError,
} from "./errors.ts";
