import { describe, expect, it } from "vitest";
import { sparkTextOfDeparsed } from "../../../shared/engine/spark/spark-window-sql.ts";

/** A windowed flow's compiled SQL, as DuckDB prints it, in the text Spark SQL reads. */
describe("a windowed flow's compiled SQL for Spark", () => {
  it("quotes identifiers with backticks, escapes strings as Spark reads them and spells count(*)", () => {
    expect(
      sparkTextOfDeparsed(
        `SELECT __ebb_window_start AS __ebb_window_start, "user" AS __ebb_g0, count_star() AS __ebb_p0_count, ` +
          `sum(id) FILTER (WHERE (kind = 'it''s \\ "x"')) AS __ebb_p1_sum FROM __ebb_window_rows AS "source" ` +
          `GROUP BY __ebb_window_start, "user"`,
      ),
    ).toBe(
      "SELECT __ebb_window_start AS __ebb_window_start, `user` AS __ebb_g0, count(*) AS __ebb_p0_count, " +
        "sum(id) FILTER (WHERE (kind = 'it\\'s \\\\ \"x\"')) AS __ebb_p1_sum FROM __ebb_window_rows AS `source` " +
        "GROUP BY __ebb_window_start, `user`",
    );
    // A name with a quote or a backtick in it, and a column merely named like the function.
    expect(
      sparkTextOfDeparsed(`SELECT __ebb_window."start" AS "a""b", x AS "c\`d", my_count_star() FROM t`),
    ).toBe('SELECT __ebb_window.`start` AS `a"b`, x AS `c``d`, my_count_star() FROM t');
    // A DISTINCT aggregate's set of values.
    expect(
      sparkTextOfDeparsed(
        `SELECT list(DISTINCT "user") FILTER (WHERE (id > 1)) AS __ebb_p0_set, my_list(DISTINCT x), list(x) FROM t`,
      ),
    ).toBe(
      "SELECT collect_list(DISTINCT `user`) FILTER (WHERE (id > 1)) AS __ebb_p0_set, my_list(DISTINCT x), list(x) FROM t",
    );
  });
});

describe("a join's compiled SQL for Spark", () => {
  it("spells DuckDB's printed interval literals as Spark's", () => {
    expect(
      sparkTextOfDeparsed(
        'SELECT c.id FROM "source" AS c INNER JOIN "views" AS v ON ((c.ts BETWEEN v.ts AND (v.ts + to_hours(CAST(trunc(CAST(1 AS DOUBLE)) AS BIGINT)))) ' +
          "AND (c.ts >= (v.ts - to_days(CAST(trunc(CAST(2 AS DOUBLE)) AS INTEGER)))) AND (c.ts <= (v.ts + CAST('1 hour 30 minutes' AS INTERVAL))) " +
          "AND (c.ts > (v.ts - to_seconds(CAST('90' AS DOUBLE)))) AND (c.note = 'to_hours(CAST(trunc(CAST(1 AS DOUBLE)) AS BIGINT))'))",
      ),
    ).toBe(
      "SELECT c.id FROM `source` AS c INNER JOIN `views` AS v ON ((c.ts BETWEEN v.ts AND (v.ts + INTERVAL '1' HOUR)) " +
        "AND (c.ts >= (v.ts - INTERVAL '2' DAY)) AND (c.ts <= (v.ts + INTERVAL '1 hour 30 minutes')) " +
        "AND (c.ts > (v.ts - INTERVAL '90' SECOND)) AND (c.note = 'to_hours(CAST(trunc(CAST(1 AS DOUBLE)) AS BIGINT))'))",
    );
  });
});
