import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { replacedFlows } from "../../../shared/control/pipelines/replaced-flows.ts";
import { flowNamesDefinition as definition } from "../../support/flow-names-definition.ts";

describe("replacedFlows", () => {
  it("names the table, the flows gone and the flows new, with the way out", () => {
    const [replaced] = replacedFlows(
      definition({ orders: ["ingest", "backfill"] }),
      definition({ orders: ["raw_orders", "backfill"] }),
    );
    expect(replaced).toMatchObject({
      dataset: "orders",
      removed_flows: ["ingest"],
      new_flows: ["raw_orders"],
    });
    expect(replaced!.message).toContain('full_refresh_selection: ["orders"]');
  });

  it("says nothing of a table added, dropped, or whose flows were only added or only removed", () => {
    const before = definition({ orders: ["ingest"], dropped: ["old"], shrunk: ["a", "b"] });
    const after = definition({ orders: ["ingest", "more"], added: ["new"], shrunk: ["a"] });
    expect(replacedFlows(before, after)).toEqual([]);
  });

  it("reports a table exactly when it lost a flow and gained another (reference model)", () => {
    const names = fc.uniqueArray(fc.constantFrom("a", "b", "c", "d"), { maxLength: 4 });
    const tables = fc.dictionary(
      fc.constantFrom("t1", "t2", "t3"),
      names.filter((f) => f.length > 0),
    );
    fc.assert(
      fc.property(tables, tables, (before, after) => {
        const expected = Object.keys(after).filter((table) => {
          const was = before[table];
          const now = after[table]!;
          return was !== undefined && was.some((f) => !now.includes(f)) && now.some((f) => !was.includes(f));
        });
        const got = replacedFlows(definition(before), definition(after));
        expect(got.map((r) => r.dataset)).toEqual(expected);
        for (const r of got) {
          expect(r.removed_flows).toEqual(before[r.dataset]!.filter((f) => !after[r.dataset]!.includes(f)));
          expect(r.new_flows).toEqual(after[r.dataset]!.filter((f) => !before[r.dataset]!.includes(f)));
        }
      }),
    );
  });
});
