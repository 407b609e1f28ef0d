import { CodedError } from "../errors/coded-error.ts";

/**
 * Errors of the operator state store. Each names the flow and says the way out (semantics.md
 * "Replay": rewind elsewhere, reset the flow's checkpoint, or fully refresh the dataset).
 */
export class StateError extends CodedError {
  override readonly name: string = "StateError";
}

/** A state version or one of its files is gone (vacuumed, or deleted by hand). */
export class StateVersionMissingError extends StateError {
  override readonly name = "StateVersionMissingError";
  override readonly errorCode = "STATE_VERSION_MISSING";
  constructor(
    readonly flow: string,
    readonly key: string,
    options: { cause?: unknown } = {},
  ) {
    super(
      `the operator state of flow "${flow}" is gone (${key} is missing): reset the flow's checkpoint (reset_checkpoint_selection) or fully refresh its dataset`,
      { ...options, data: { flow, key } },
    );
  }
}

/** A state file that is not one Ebb wrote (or that an older, incompatible engine wrote). */
export class StateFormatError extends StateError {
  override readonly name = "StateFormatError";
  override readonly errorCode = "INVALID_STATE";
  constructor(
    readonly flow: string,
    readonly key: string,
    detail: string,
  ) {
    super(
      `the operator state of flow "${flow}" at ${key} cannot be read (${detail}): reset the flow's checkpoint (reset_checkpoint_selection) or fully refresh its dataset`,
      { data: { flow, key } },
    );
  }
}

/**
 * The flow's definition needs a state table of another shape than the stored state holds (changed
 * keys, aggregates, window or watermark column).
 */
export class IncompatibleStateError extends StateError {
  override readonly name = "IncompatibleStateError";
  override readonly errorCode = "INCOMPATIBLE_STATE";
  override readonly httpStatus = 409;
  constructor(
    readonly flow: string,
    readonly table: string,
    readonly stored: string,
    readonly wanted: string,
  ) {
    super(
      `flow "${flow}" cannot continue from its operator state: its ${table} state holds ${stored}, but the definition needs ${wanted}; ` +
        `revert the change, rewind to a point taken before the state was written, reset the flow's checkpoint (reset_checkpoint_selection), or fully refresh its dataset`,
      { data: { flow, table, stored, wanted } },
    );
  }
}

/** The state reader: the pipeline has no flow of that name. */
export class FlowNotFoundError extends StateError {
  override readonly name = "FlowNotFoundError";
  override readonly errorCode = "FLOW_NOT_FOUND";
  override readonly httpStatus = 404;
  constructor(
    readonly flow: string,
    flows: readonly string[],
  ) {
    super(
      `the pipeline has no flow "${flow}": its flows are ${flows.length > 0 ? flows.map((f) => `"${f}"`).join(", ") : "none"} (GET /api/2.0/pipelines/{id}/datasets lists each dataset's flows)`,
      { data: { flow } },
    );
  }
}

/** The state reader: the flow keeps no operator state, here or at the asked checkpoint. */
export class FlowWithoutStateError extends StateError {
  override readonly name = "FlowWithoutStateError";
  override readonly errorCode = "FLOW_HAS_NO_STATE";
  override readonly httpStatus = 400;
  constructor(readonly flow: string) {
    super(
      `flow "${flow}" keeps no operator state (no watermark, drop_duplicates, windowed aggregation or auto_cdc): read its table instead (POST /api/2.0/tables/{full_name}/query)`,
      { data: { flow } },
    );
  }
}

/** The state reader: no committed checkpoint of the flow has that seq. */
export class CheckpointNotFoundError extends StateError {
  override readonly name = "CheckpointNotFoundError";
  override readonly errorCode = "CHECKPOINT_NOT_FOUND";
  override readonly httpStatus = 404;
  constructor(
    readonly flow: string,
    readonly seq: number,
    headSeq: number,
  ) {
    super(
      `flow "${flow}" has no committed checkpoint ${seq} (its HEAD is checkpoint ${headSeq}): pass a checkpoint_seq the flow's progress events name, or a rewind_point_id`,
      { data: { flow, seq } },
    );
  }
}
