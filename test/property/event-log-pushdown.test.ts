import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { eventTypesRead } from "../../shared/control/statements/event-log-pushdown.ts";
import { DuckSession } from "../../shared/duck/duck-session.ts";

/**
 * Reading only the event types a statement keeps never changes its answer: against the reference
 * (every event loaded), random event logs, statements that narrow and statements that must not.
 */
describe("event_log pushdown", () => {
  const RELATION = "__ebb_source_1";
  let duck: DuckSession;
  beforeAll(async () => {
    duck = await DuckSession.open();
  });
  afterAll(() => duck?.close());

  const tree = async (sql: string) => {
    const [row] = await duck.rows("SELECT json_serialize_sql($1::VARCHAR) AS tree", [sql]);
    return (JSON.parse(String(row!["tree"])) as { statements: unknown[] }).statements[0];
  };

  /** Each statement, and the types it narrows to (undefined: everything is read). */
  const STATEMENTS: [string, string[] | undefined][] = [
    [`SELECT id FROM ${RELATION} WHERE event_type = 'rewind_summary' AND level = 'INFO'`, ["rewind_summary"]],
    [`SELECT id FROM ${RELATION} e WHERE 'flow_progress' = E.EVENT_TYPE`, ["flow_progress"]],
    [
      `SELECT count(*) AS n FROM ${RELATION} WHERE event_type IN ('a', 'rewind_summary')`,
      ["a", "rewind_summary"],
    ],
    [
      `SELECT level, count(*) AS n FROM (SELECT * FROM ${RELATION} WHERE event_type = 'flow_progress') GROUP BY level`,
      ["flow_progress"],
    ],
    [
      `WITH s AS (SELECT id, level FROM ${RELATION} WHERE event_type = 'flow_progress' AND id > 'm') SELECT * FROM s`,
      ["flow_progress"],
    ],
    // Not narrowed: an OR, a negation, a second reference, a join, renamed columns, a collation.
    [`SELECT id FROM ${RELATION} WHERE event_type = 'rewind_summary' OR level = 'WARN'`, undefined],
    [`SELECT id FROM ${RELATION} WHERE event_type <> 'rewind_summary'`, undefined],
    [`SELECT id FROM ${RELATION} WHERE event_type NOT IN ('flow_progress')`, undefined],
    [
      `SELECT id FROM ${RELATION} WHERE event_type = 'a' UNION ALL SELECT id FROM ${RELATION} WHERE level = 'WARN'`,
      undefined,
    ],
    [
      `SELECT a.id FROM ${RELATION} a JOIN ${RELATION} b ON a.level = b.level WHERE a.event_type = 'a'`,
      undefined,
    ],
    [`SELECT x.id FROM (VALUES ('a')) v(event_type), ${RELATION} x WHERE v.event_type = 'a'`, undefined],
    [`SELECT id FROM ${RELATION} r(id, event_type, level) WHERE event_type = 'WARN'`, undefined],
    [`SELECT id FROM ${RELATION} WHERE event_type = 'A' COLLATE NOCASE`, undefined],
    [`SELECT id FROM ${RELATION} WHERE event_type = NULL`, undefined],
  ];

  it("narrows the statements it can, and no others", async () => {
    for (const [sql, types] of STATEMENTS)
      expect(eventTypesRead(await tree(sql), RELATION), sql).toEqual(types);
  });

  const event = fc.record({
    id: fc.stringMatching(/^[a-z]{1,3}$/),
    level: fc.constantFrom("INFO", "WARN"),
    event_type: fc.constantFrom("a", "A", "flow_progress", "rewind_summary"),
  });

  it("answers as over every event", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(event, { maxLength: 12 }), async (events) => {
        for (const [sql] of STATEMENTS) {
          const types = eventTypesRead(await tree(sql), RELATION);
          const read = types ? events.filter((e) => types.includes(e.event_type)) : events;
          expect(await answer(sql, read), sql).toEqual(await answer(sql, events));
        }
      }),
      { numRuns: 40 },
    );
  });

  async function answer(sql: string, events: readonly { id: string; level: string; event_type: string }[]) {
    const values = events.map((e) => `('${e.id}', '${e.level}', '${e.event_type}')`).join(", ");
    await duck.run(
      `CREATE OR REPLACE TEMP TABLE ${RELATION} AS SELECT * FROM (VALUES ('', '', '')) t(id, level, event_type) WHERE false` +
        (values ? ` UNION ALL SELECT * FROM (VALUES ${values}) t(id, level, event_type)` : ""),
    );
    const rows = await duck.rows(sql);
    return rows
      .map((row) => JSON.stringify(row, (_, v: unknown) => (typeof v === "bigint" ? Number(v) : v)))
      .sort();
  }
});
