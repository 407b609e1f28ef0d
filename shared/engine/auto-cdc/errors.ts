import { EngineError } from "../errors.ts";

/** An AUTO CDC flow's settings name columns its SQL does not produce, or reserved ones. */
export class AutoCdcColumnError extends EngineError {
  override readonly name = "AutoCdcColumnError";
  override readonly errorCode = "AUTO_CDC_COLUMN_NOT_FOUND";
  constructor(
    readonly flow: string,
    readonly problems: readonly string[],
    readonly available: readonly string[],
  ) {
    super(
      `AUTO CDC flow "${flow}": ${problems.join("; ")}; its SQL produces ${available.join(", ")}. Fix auto_cdc or the flow's SQL`,
      { data: { flow, problems, available } },
    );
  }
}

/** A change event without a sequence value, or (other than a truncate) without a key. */
export class AutoCdcEventError extends EngineError {
  override readonly name = "AutoCdcEventError";
  override readonly errorCode = "AUTO_CDC_INVALID_EVENT";
  constructor(
    readonly flow: string,
    readonly nullSequences: number,
    readonly nullKeys: number,
  ) {
    const problems = [
      ...(nullSequences > 0 ? [`${nullSequences} with a NULL sequence_by`] : []),
      ...(nullKeys > 0 ? [`${nullKeys} with a NULL key`] : []),
    ];
    super(
      `AUTO CDC flow "${flow}" read change events it cannot order or place: ${problems.join(", ")}; filter them out in the flow's SQL (e.g. WHERE <key> IS NOT NULL), or mark them as truncates with apply_as_truncates`,
      { data: { flow, nullSequences, nullKeys } },
    );
  }
}

/** The flow's per-key state (its latest sequence per key, tombstones) is gone or is not Ebb's. */
export class AutoCdcStateError extends EngineError {
  override readonly name = "AutoCdcStateError";
  override readonly errorCode = "INVALID_STATE";
}

/**
 * Another AUTO CDC flow into the same target keeps its events in another shape (other columns or
 * column types): the events of both could not be applied as one set.
 */
export class AutoCdcFlowsIncompatibleError extends EngineError {
  override readonly name = "AutoCdcFlowsIncompatibleError";
  override readonly errorCode = "AUTO_CDC_FLOWS_INCOMPATIBLE";
  constructor(
    readonly flow: string,
    readonly peer: string,
    readonly target: string,
    options: { cause?: unknown } = {},
  ) {
    super(
      `AUTO CDC flows "${flow}" and "${peer}" both write "${target}" but their change events have different columns or column types: give both the same column_list / except_column_list and the same column types in their SQL (then reset the changed flow's checkpoint), or give each its own table`,
      { ...options, data: { flow, peer, target } },
    );
  }
}

/**
 * A definition that would apply an AUTO CDC flow's events otherwise than its per-key state (and the
 * target's rows) were written under: other keys, sequence, written or tracked columns, null handling.
 * Continuing would mix two meanings in one table, so the update is refused before it starts.
 */
export class AutoCdcStateIncompatibleError extends EngineError {
  override readonly name = "AutoCdcStateIncompatibleError";
  override readonly errorCode = "AUTO_CDC_STATE_INCOMPATIBLE";
  override readonly httpStatus = 409;
  constructor(
    readonly flow: string,
    readonly target: string,
    readonly checkpointSeq: number | undefined,
    readonly problems: readonly string[],
    wayOut: string,
  ) {
    const at = checkpointSeq === undefined ? "" : ` (checkpoint ${checkpointSeq})`;
    super(
      `AUTO CDC flow "${flow}" into "${target}" cannot continue from its per-key state${at}: ${problems.join("; ")}. ${wayOut}`,
      { data: { flow, target, checkpointSeq, problems } },
    );
  }
}
