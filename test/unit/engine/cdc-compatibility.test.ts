import { describe, expect, it } from "vitest";
import { checkCdcLayout, layoutDifferences } from "../../../shared/engine/auto-cdc/cdc-compatibility.ts";
import {
  cdcLayout,
  storedLayoutOf,
  type StoredCdcLayout,
} from "../../../shared/engine/auto-cdc/cdc-layout.ts";
import { AutoCdcStateIncompatibleError } from "../../../shared/engine/auto-cdc/errors.ts";
import type { FlowDefinition } from "../../../shared/pipeline/definition-schema.ts";
import { autoCdcPlan } from "../../../shared/pipeline/plan/index.ts";

/**
 * Which definition changes an AUTO CDC flow's per-key state refuses, and which way out each gets: a
 * checkpoint reset where the sources can rewrite the table, a full refresh where the table no
 * longer fits.
 */

const OUTPUT = ["id", "name", "city", "zip", "op", "seq"];
const layout = (cdc: Record<string, unknown> = {}) =>
  cdcLayout(
    "f",
    autoCdcPlan({
      name: "f",
      sql: "SELECT * FROM source",
      auto_cdc: {
        keys: ["id"],
        sequence_by: "seq",
        except_column_list: ["op", "seq"],
        stored_as_scd_type: 2,
        ignore_null_updates: false,
        ...cdc,
      },
    } as unknown as FlowDefinition),
    OUTPUT,
  );
const stored: StoredCdcLayout = storedLayoutOf(layout());

describe("AUTO CDC state compatibility", () => {
  it("accepts the same layout, however the settings spell it, and changed delete or truncate conditions", () => {
    expect(layoutDifferences(stored, stored).problems).toEqual([]);
    const spelled = layout({ except_column_list: undefined, column_list: ["id", "name", "city", "zip"] });
    expect(layoutDifferences(stored, storedLayoutOf(spelled)).problems).toEqual([]);
    const deletes = layout({ apply_as_deletes: "op = 'D'" });
    expect(layoutDifferences(stored, storedLayoutOf(deletes)).problems).toEqual([]);
  });

  it.each([
    ["a newly written column", { except_column_list: ["op"] }, /seq newly written/, false],
    [
      "other history columns",
      { track_history_column_list: ["city"] },
      /track_history_\* columns are now \(city\)/,
      false,
    ],
    ["another ignore_null_updates", { ignore_null_updates: true }, /ignore_null_updates is now true/, false],
    [
      "a column no longer written",
      { except_column_list: ["op", "seq", "zip"] },
      /zip no longer written/,
      true,
    ],
    ["other keys", { keys: ["id", "name"] }, /keys are now \(id, name\)/, true],
    ["another sequence", { sequence_by: "zip" }, /sequence_by is now \(zip\)/, true],
    [
      "another SCD type",
      { stored_as_scd_type: 1 },
      /stored_as_scd_type 1, the state and table are type 2/,
      true,
    ],
  ] as const)("refuses %s", (_, change, problem, refreshOnly) => {
    const differences = layoutDifferences(stored, storedLayoutOf(layout(change)));
    expect(differences.problems.join("; ")).toMatch(problem);
    expect(differences.refreshOnly).toBe(refreshOnly);
  });

  it("names the flow, the target and the way out", () => {
    const at = { flow: "f", target: "t", flows: ["f", "g"], checkpointSeq: 3 };
    expect(() => checkCdcLayout(at, undefined, layout({ ignore_null_updates: true }))).not.toThrow();
    const reset = () => checkCdcLayout(at, stored, layout({ except_column_list: ["op"] }));
    expect(reset).toThrow(AutoCdcStateIncompatibleError);
    expect(reset).toThrow(
      /^AUTO CDC flow "f" into "t" cannot continue from its per-key state \(checkpoint 3\): .*Reset the checkpoints of the flows into "t" \(reset_checkpoint_selection: \["f", "g"\]\)/,
    );
    expect(() => checkCdcLayout(at, stored, layout({ except_column_list: ["op", "seq", "zip"] }))).toThrow(
      /The table no longer fits either: fully refresh "t" \(full_refresh_selection: \["t"\]\)/,
    );
  });
});
