import { z } from "zod";
import type { AutoCdcFlowPlan } from "../../pipeline/plan/index.ts";
import { AutoCdcColumnError } from "./errors.ts";

/**
 * Which column of an AUTO CDC flow's output plays which part (pure): the keys, the sequence, the data
 * columns written to the target (Databricks: every column, or `column_list`, minus
 * `except_column_list`; keys always) and, for SCD type 2, the tracked ones.
 */

/** The SCD type 2 validity columns, with Databricks' names. */
export const START_AT = "__START_AT";
export const END_AT = "__END_AT";

export interface CdcLayout {
  readonly scdType: 1 | 2;
  readonly keys: readonly string[];
  /** The columns whose values (in order) sequence the events. */
  readonly sequence: readonly string[];
  /** Non-key columns written to the target, in output order. */
  readonly values: readonly string[];
  /** SCD type 2: the value columns whose change starts a new version. */
  readonly tracked: readonly string[];
  readonly ignoreNullUpdates: boolean;
  readonly deletes?: string;
  readonly truncates?: string;
}

/**
 * Resolves the flow's compiled AUTO CDC plan against its output columns; every problem at once,
 * each named by the setting the user wrote.
 */
export function cdcLayout(flow: string, cdc: AutoCdcFlowPlan, output: readonly string[]): CdcLayout {
  const problems: string[] = [];
  const missing = (what: string, names: readonly string[] | undefined) => {
    const absent = (names ?? []).filter((name) => !output.includes(name));
    if (absent.length > 0)
      problems.push(`${what} names ${absent.map((n) => `"${n}"`).join(", ")}, not in the output`);
  };
  const sequence = cdc.sequenceBy;
  missing("keys", cdc.keys);
  missing("sequence_by", sequence);
  missing("column_list", cdc.columnList);
  missing("except_column_list", cdc.exceptColumnList);
  missing("track_history_column_list", cdc.trackHistoryColumnList);
  missing("track_history_except_column_list", cdc.trackHistoryExceptColumnList);
  const reserved = output.filter((name) => name === START_AT || name === END_AT || name.startsWith("__cdc_"));
  if (reserved.length > 0)
    problems.push(
      `${reserved.join(", ")} ${reserved.length === 1 ? "is" : "are"} reserved (rename it in the SQL)`,
    );

  const written = (cdc.columnList ?? output).filter((name) => !(cdc.exceptColumnList ?? []).includes(name));
  const values = written.filter((name) => !cdc.keys.includes(name));
  const notWritten = [
    ...(cdc.trackHistoryColumnList ?? []),
    ...(cdc.trackHistoryExceptColumnList ?? []),
  ].filter((name) => output.includes(name) && !values.includes(name));
  if (notWritten.length > 0)
    problems.push(
      `track_history lists ${notWritten.map((n) => `"${n}"`).join(", ")}, which the target does not hold`,
    );
  if (problems.length > 0) throw new AutoCdcColumnError(flow, problems, output);

  const tracked = cdc.trackHistoryColumnList
    ? values.filter((name) => cdc.trackHistoryColumnList!.includes(name))
    : values.filter((name) => !(cdc.trackHistoryExceptColumnList ?? []).includes(name));
  return {
    scdType: cdc.scdType,
    keys: cdc.keys,
    sequence,
    values,
    tracked,
    ignoreNullUpdates: cdc.ignoreNullUpdates,
    ...(cdc.applyAsDeletes !== undefined ? { deletes: cdc.applyAsDeletes } : {}),
    ...(cdc.applyAsTruncates !== undefined ? { truncates: cdc.applyAsTruncates } : {}),
  };
}

/**
 * The part of a layout that decides what a flow's per-key state and its target's rows mean, as the
 * state records it (apply_as_deletes / apply_as_truncates only classify new events, so they may
 * change freely).
 */
export const storedLayoutSchema = z
  .object({
    scdType: z.union([z.literal(1), z.literal(2)]),
    keys: z.array(z.string()),
    sequence: z.array(z.string()),
    values: z.array(z.string()),
    tracked: z.array(z.string()),
    ignoreNullUpdates: z.boolean(),
  })
  .strict();
export type StoredCdcLayout = z.infer<typeof storedLayoutSchema>;

export function storedLayoutOf(layout: CdcLayout): StoredCdcLayout {
  return {
    scdType: layout.scdType,
    keys: [...layout.keys],
    sequence: [...layout.sequence],
    values: [...layout.values],
    tracked: [...layout.tracked],
    ignoreNullUpdates: layout.ignoreNullUpdates,
  };
}
