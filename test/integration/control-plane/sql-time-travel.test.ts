import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ingestPipeline, startTestControlPlane, type TestControlPlane } from "../../support/control-plane.ts";

/**
 * Delta's time travel in SQL (issue 33: it answered PARSE_SYNTAX_ERROR): `VERSION AS OF`,
 * `TIMESTAMP AS OF` and `@v…` read that version, in the table query endpoint and in the SQL
 * statements API, beside the latest version in the same query.
 */
const TABLE = "travel.s.raw";

describe("SQL time travel", () => {
  let cp: TestControlPlane;
  let pipelineId: string;
  const run = async () => {
    const { update_id } = await cp.client.startUpdate(pipelineId);
    return cp.client.waitForUpdate(pipelineId, update_id, { intervalMs: 200 });
  };

  beforeAll(async () => {
    cp = await startTestControlPlane();
    ({ pipeline_id: pipelineId } = await cp.client.createPipeline(
      ingestPipeline({ name: "travel", catalog: "travel", schema: "s", path: cp.landing }),
    ));
    await cp.land("1.json", [{ id: 1 }, { id: 2 }]);
    expect((await run()).state).toBe("COMPLETED");
    await cp.land("2.json", [{ id: 3 }]);
    expect((await run()).state).toBe("COMPLETED");
  });
  afterAll(async () => {
    if (pipelineId) await cp.client.deletePipeline(pipelineId, true).catch(() => undefined);
    await cp?.close();
  });

  it("reads a past version in a table query, beside the latest", async () => {
    const count = async (sql: string) => (await cp.client.query(TABLE, { sql })).rows;
    expect(await count("SELECT count(*) AS n FROM t VERSION AS OF 1")).toEqual([{ n: 2 }]);
    expect(await count("SELECT count(*) AS n FROM raw@v1")).toEqual([{ n: 2 }]);
    const first = (await cp.client.history(TABLE)).history.find((entry) => entry.version === 1)!;
    expect(await count(`SELECT count(*) AS n FROM t TIMESTAMP AS OF '${String(first.timestamp)}'`)).toEqual([
      { n: 2 },
    ]);
    expect(
      await count("SELECT id FROM t EXCEPT SELECT id FROM travel.s.raw FOR SYSTEM_VERSION AS OF 1"),
    ).toEqual([{ id: 3 }]);
  });

  it("reads a past version in the SQL statements API", async () => {
    const answer = await cp.client.executeStatement({
      statement: `SELECT (SELECT count(*) FROM ${TABLE}) AS now, (SELECT count(*) FROM ${TABLE} VERSION AS OF 1) AS then`,
    });
    expect(answer.status).toEqual({ state: "SUCCEEDED" });
    expect(answer.result!.data_array).toEqual([["3", "2"]]);
    const short = await cp.client.executeStatement({
      statement: "SELECT count(*) AS n FROM raw@v1",
      catalog: "travel",
      schema: "s",
    });
    expect(short.result!.data_array).toEqual([["2"]]);
  });

  it("a version the table does not hold is the user's error, by name", async () => {
    const answer = await cp.client.executeStatement({ statement: `SELECT * FROM ${TABLE} VERSION AS OF 99` });
    expect(answer.status.state).toBe("FAILED");
    expect(answer.status.error?.message).toContain("version 99 is not in the table's history");
  });
});
