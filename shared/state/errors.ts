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
