import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { movedFlows } from "../../../shared/control/pipelines/moved-flows.ts";
import { flowNamesDefinition as definition } from "../../support/flow-names-definition.ts";

describe("movedFlows", () => {
  it("names the flow, the table it wrote and the one it writes now, with both ways out", () => {
    const [moved] = movedFlows(
      definition({ orders: ["ingest", "backfill"], orders_v2: ["fresh"] }),
      definition({ orders: ["backfill"], orders_v2: ["fresh", "ingest"] }),
    );
    expect(moved).toMatchObject({ flow: "ingest", from_dataset: "orders", to_dataset: "orders_v2" });
    expect(moved!.message).toContain('full_refresh_selection: ["orders_v2"]');
    expect(moved!.message).toContain('reset_checkpoint_selection: ["ingest"]');
  });

  it("says nothing of a flow added, removed, or staying with its table", () => {
    const before = definition({ orders: ["ingest", "gone"], other: ["keep"] });
    const after = definition({ orders: ["ingest", "added"], other: ["keep"] });
    expect(movedFlows(before, after)).toEqual([]);
  });

  it("reports a flow exactly when it writes another table after the edit (reference model)", () => {
    // Each flow writes at most one table: a flow → table assignment, undefined for "not in the definition".
    const flows = ["a", "b", "c", "d"] as const;
    const assignment = fc.record(
      Object.fromEntries(flows.map((f) => [f, fc.option(fc.constantFrom("t1", "t2", "t3"))])),
    );
    const tables = (of: Record<string, string | null>) => {
      const out: Record<string, string[]> = {};
      for (const [flow, table] of Object.entries(of)) if (table) (out[table] ??= []).push(flow);
      return out;
    };
    fc.assert(
      fc.property(assignment, assignment, (before, after) => {
        const expected = flows
          .filter((f) => before[f] && after[f] && before[f] !== after[f])
          .map((f) => ({ flow: f, from_dataset: before[f], to_dataset: after[f] }));
        const got = movedFlows(definition(tables(before)), definition(tables(after)));
        const key = (m: { flow: string }) => m.flow;
        expect(
          got
            .map(({ flow, from_dataset, to_dataset }) => ({ flow, from_dataset, to_dataset }))
            .sort((x, y) => key(x).localeCompare(key(y))),
        ).toEqual(expected);
      }),
    );
  });
});
