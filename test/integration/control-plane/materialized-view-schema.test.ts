import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestControlPlane, type TestControlPlane } from "../../support/control-plane.ts";

/**
 * A materialized view's schema follows its query, as on Databricks (issue 33: a deploy that added a
 * column failed the next update with SCHEMA_MISMATCH): the refresh after the deploy recomputes and
 * replaces the table's schema in its own commit (a `metaData` action), on the incremental path (a
 * decomposable aggregate, kept as partial state) and on the full one alike; a dropped column too.
 */
const definition = (landing: string, totalsSql: string, listingSql: string) => ({
  datasets: [
    {
      type: "streaming_table",
      name: "raw",
      flows: [
        {
          name: "ingest",
          source: { type: "auto_loader", path: landing, format: "json", schema: { id: "BIGINT" } },
          sql: "SELECT id FROM source",
        },
      ],
    },
    { type: "materialized_view", name: "totals", sql: totalsSql },
    { type: "materialized_view", name: "listing", sql: listingSql },
  ],
});

describe("a materialized view whose query changes its columns", () => {
  let cp: TestControlPlane;
  let pipelineId: string;
  const run = async () => {
    const { update_id } = await cp.client.startUpdate(pipelineId);
    return cp.client.waitForUpdate(pipelineId, update_id, { intervalMs: 200 });
  };
  const rows = async (table: string, sql = "SELECT * FROM t") =>
    (await cp.client.query(`mvschema.s.${table}`, { sql })).rows;
  const deploy = (totalsSql: string, listingSql: string) =>
    cp.client.editPipeline(pipelineId, { definition: definition(cp.landing, totalsSql, listingSql) });

  beforeAll(async () => {
    cp = await startTestControlPlane();
    ({ pipeline_id: pipelineId } = await cp.client.createPipeline({
      name: "mv schema",
      catalog: "mvschema",
      schema: "s",
      definition: definition(cp.landing, "SELECT count(*) AS n FROM raw", "SELECT id FROM raw"),
    }));
    await cp.land("1.json", [{ id: 1 }, { id: 2 }]);
    expect((await run()).state).toBe("COMPLETED");
  });
  afterAll(async () => {
    if (pipelineId) await cp.client.deletePipeline(pipelineId, true).catch(() => undefined);
    await cp?.close();
  });

  it("gains a column at the next refresh, incremental and full views alike", async () => {
    await deploy("SELECT count(*) AS n, sum(id) AS total FROM raw", "SELECT id, id * 2 AS twice FROM raw");
    await cp.land("2.json", [{ id: 3 }]);
    const update = await run();
    expect(update.error).toBeUndefined();
    expect(update.state).toBe("COMPLETED");
    expect(await rows("totals")).toEqual([{ n: 3, total: 6 }]);
    expect(await rows("listing", "SELECT * FROM t ORDER BY id")).toEqual([
      { id: 1, twice: 2 },
      { id: 2, twice: 4 },
      { id: 3, twice: 6 },
    ]);
    // The schema changed in the refresh's own commit: the version before reads the old columns, and
    // the change feed across it (an additive change) reads in the new schema.
    const history = (await cp.client.history("mvschema.s.totals")).history;
    const before = (await cp.client.query("mvschema.s.totals", { version: Number(history[1]!.version) }))
      .rows;
    expect(before).toEqual([{ n: 2 }]);
    const changes = await cp.client.changes("mvschema.s.totals", {
      starting_version: Number(history[1]!.version),
    });
    expect(changes.changes).toContainEqual(
      expect.objectContaining({ n: 3, total: 6, _change_type: "insert" }),
    );
  });

  it("drops a column the query no longer gives", async () => {
    await deploy("SELECT sum(id) AS total FROM raw", "SELECT id * 2 AS twice FROM raw");
    const update = await run();
    expect(update.error).toBeUndefined();
    expect(update.state).toBe("COMPLETED");
    expect(await rows("totals")).toEqual([{ total: 6 }]);
    expect(await rows("listing", "SELECT * FROM t ORDER BY twice")).toEqual([
      { twice: 2 },
      { twice: 4 },
      { twice: 6 },
    ]);
  });
});
