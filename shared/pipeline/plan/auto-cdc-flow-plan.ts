/**
 * An AUTO CDC flow: its SQL turns each micro-batch into change events, applied by key in
 * `sequenceBy` order to an SCD type 1 or 2 target (auto-cdc-schema.ts has the settings' meaning).
 */
export interface AutoCdcFlowPlan {
  readonly kind: "auto_cdc";
  readonly flow: string;
  readonly sql: string;
  readonly keys: readonly string[];
  /** The sequence columns, compared in order. */
  readonly sequenceBy: readonly string[];
  readonly applyAsDeletes?: string;
  readonly applyAsTruncates?: string;
  readonly columnList?: readonly string[];
  readonly exceptColumnList?: readonly string[];
  readonly scdType: 1 | 2;
  readonly trackHistoryColumnList?: readonly string[];
  readonly trackHistoryExceptColumnList?: readonly string[];
  readonly ignoreNullUpdates: boolean;
}
