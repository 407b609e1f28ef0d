import { describe, expect, it } from "vitest";
import { translateStatement, travelledReferences } from "../../../shared/sql/index.ts";

describe("Delta time travel in SQL", () => {
  const translate = (sql: string) => translateStatement(sql, { now: 0 });

  it("makes each time-travelled table a source at its version or timestamp", () => {
    const { sql, sources } = translate(
      "SELECT * FROM c.s.t VERSION AS OF 3 JOIN c.s.t@v1 USING (id) JOIN c.s.t TIMESTAMP AS OF '2026-09-29 08:36:55' USING (id) JOIN c.s.t FOR SYSTEM_VERSION AS OF 3 USING (id) JOIN c.s.t@20260929083655123 USING (id)",
    );
    expect(sources.map(({ relation: _relation, ...source }) => source)).toEqual([
      { kind: "table", table: "c.s.t", version: 3 },
      { kind: "table", table: "c.s.t", version: 1 },
      { kind: "table", table: "c.s.t", timestamp: "2026-09-29 08:36:55" },
      { kind: "table", table: "c.s.t", timestamp: "2026-09-29 08:36:55.123" },
    ]);
    expect(sql).toBe(
      "SELECT * FROM __ebb_source_1 JOIN __ebb_source_2 USING (id) JOIN __ebb_source_3 USING (id) JOIN __ebb_source_1 USING (id) JOIN __ebb_source_4 USING (id)",
    );
  });

  it("refuses a time travel it cannot read, by name", () => {
    expect(() => translate("SELECT * FROM c.s.t VERSION AS OF x")).toThrow(
      /VERSION AS OF takes a version number/,
    );
    expect(() => translate("SELECT * FROM c.s.t@latest")).toThrow(/@v<version> or @yyyyMMddHHmmssSSS/);
    expect(() => translate("SELECT * FROM t VERSION AS OF 1")).toThrow(/not a full table name/);
  });

  it("renames the query endpoint's time-travelled references to its table, and nothing else", () => {
    expect(
      travelledReferences(
        "SELECT (SELECT count(*) FROM t) - (SELECT count(*) FROM raw VERSION AS OF 1) AS gained FROM other@v2",
        ["t", "raw", "c.s.raw"],
      ),
    ).toEqual({
      sql: "SELECT (SELECT count(*) FROM t) - (SELECT count(*) FROM __ebb_travel_1) AS gained FROM other@v2",
      references: [{ relation: "__ebb_travel_1", at: { version: 1 } }],
    });
  });
});
