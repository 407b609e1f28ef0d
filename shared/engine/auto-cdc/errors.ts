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
