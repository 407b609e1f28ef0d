import { z } from "zod";
import { columnNameSchema } from "./identifier.ts";
import { strictObject } from "./strict-object.ts";

/**
 * An AUTO CDC flow's settings, with Databricks' parameter names (`create_auto_cdc_flow`, SQL
 * `AUTO CDC INTO`), so a Databricks user recognises every field. The flow's `sql` turns the micro-batch
 * into change events; these settings say how the events are applied to the target:
 *
 * - `keys`: the columns that identify a row of the target.
 * - `sequence_by`: the column (or columns, compared in order, as Databricks' `struct(a, b)`) that
 *   orders the events of a key. Events are applied by sequence, never by arrival.
 * - `apply_as_deletes` / `apply_as_truncates`: SQL conditions on an event; a truncate (SCD type 1
 *   only) removes every row whose sequence is below its own.
 * - `column_list` / `except_column_list`: the columns written to the target (keys always).
 * - `stored_as_scd_type`: 1 keeps the latest row per key, 2 keeps every version with
 *   `__START_AT` / `__END_AT`.
 * - `track_history_column_list` / `track_history_except_column_list` (type 2): a change to a column
 *   that is not tracked updates the current version in place instead of starting a new one.
 * - `ignore_null_updates`: a NULL in an update keeps the value the row had.
 */

const columns = (what: string) =>
  z
    .array(columnNameSchema())
    .min(1, { error: `${what} needs at least one column` })
    .refine((list) => new Set(list).size === list.length, { error: `${what} names a column twice` });

const condition = z.string().trim().min(1, { error: "the condition must not be empty" });

export const autoCdcSchema = strictObject({
  keys: columns("keys"),
  sequence_by: z.union([columnNameSchema(), columns("sequence_by")]),
  apply_as_deletes: condition.optional(),
  apply_as_truncates: condition.optional(),
  column_list: columns("column_list").optional(),
  except_column_list: columns("except_column_list").optional(),
  /** 1 or 2; Databricks' SQL form `STORED AS SCD TYPE 2` makes the string "2" natural too. */
  stored_as_scd_type: z
    .preprocess((v) => (typeof v === "string" && /^\s*[12]\s*$/.test(v) ? Number(v) : v), z.literal([1, 2]))
    .default(1),
  track_history_column_list: columns("track_history_column_list").optional(),
  track_history_except_column_list: columns("track_history_except_column_list").optional(),
  ignore_null_updates: z.boolean().default(false),
}).superRefine((cdc, ctx) => {
  const both = (a: keyof typeof cdc, b: keyof typeof cdc) => {
    if (cdc[a] !== undefined && cdc[b] !== undefined)
      ctx.addIssue({ code: "custom", path: [b], message: `set ${a} or ${b}, not both` });
  };
  both("column_list", "except_column_list");
  both("track_history_column_list", "track_history_except_column_list");
  if (cdc.stored_as_scd_type === 1) {
    for (const key of ["track_history_column_list", "track_history_except_column_list"] as const) {
      if (cdc[key] !== undefined)
        ctx.addIssue({
          code: "custom",
          path: [key],
          message: `${key} applies to SCD type 2 (history): set stored_as_scd_type: 2 or remove it`,
        });
    }
  } else if (cdc.apply_as_truncates !== undefined) {
    ctx.addIssue({
      code: "custom",
      path: ["apply_as_truncates"],
      message:
        "apply_as_truncates applies to SCD type 1 only (a truncate would erase the history a type 2 table keeps): remove it, or use stored_as_scd_type: 1",
    });
  }
  const sequence = typeof cdc.sequence_by === "string" ? [cdc.sequence_by] : cdc.sequence_by;
  for (const key of cdc.keys) {
    if (sequence.includes(key))
      ctx.addIssue({
        code: "custom",
        path: ["sequence_by"],
        message: `key column "${key}" cannot also order the events: sequence_by must be other columns`,
      });
    if (cdc.except_column_list?.includes(key))
      ctx.addIssue({
        code: "custom",
        path: ["except_column_list"],
        message: `key column "${key}" is always written to the target: remove it from except_column_list`,
      });
    if (cdc.column_list && !cdc.column_list.includes(key))
      ctx.addIssue({
        code: "custom",
        path: ["column_list"],
        message: `column_list must include the key column "${key}"`,
      });
  }
});

export type AutoCdcDefinition = z.infer<typeof autoCdcSchema>;

/** The sequence_by columns as a list (one column is a list of one). */
export function sequenceColumns(cdc: AutoCdcDefinition): readonly string[] {
  return typeof cdc.sequence_by === "string" ? [cdc.sequence_by] : cdc.sequence_by;
}
