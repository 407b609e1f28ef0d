import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestControlPlane, type TestControlPlane } from "../../support/control-plane.ts";

/**
 * A deploy that changes a flow's output schema, through the API: an added column evolves the table
 * (older rows read NULL, a reader downstream gets it too, a rewind before the change restores the
 * old schema, GET pipeline shows the pending replay, and the replay evolves it again); a dropped column or a type that loses data is refused
 * before anything runs — at a validate_only start and at a start — and a full refresh applies it.
 */

const definition = (landing: string, sql: string, cleanSql = "SELECT * FROM source") => ({
  datasets: [
    {
      type: "streaming_table",
      name: "raw",
      flows: [
        {
          name: "ingest",
          source: {
            type: "auto_loader",
            path: landing,
            format: "json",
            schema: { id: "BIGINT", v: "VARCHAR" },
          },
          sql,
        },
      ],
    },
    {
      type: "streaming_table",
      name: "clean",
      flows: [{ name: "copy", source: { type: "stream", dataset: "raw" }, sql: cleanSql }],
    },
  ],
});

describe("schema changes through the API", () => {
  let cp: TestControlPlane;
  let pipelineId: string;

  const run = async (body?: unknown) => {
    const { update_id } = await cp.client.startUpdate(pipelineId, body);
    return cp.client.waitForUpdate(pipelineId, update_id, { intervalMs: 200 });
  };
  const rows = async (table: string) =>
    (await cp.client.query(`evolve.s.${table}`, { sql: "SELECT * FROM t ORDER BY id" })).rows;
  const deploy = (sql: string, cleanSql?: string) =>
    cp.client.editPipeline(pipelineId, { definition: definition(cp.landing, sql, cleanSql) });
  const refusal = (promise: Promise<unknown>) =>
    promise.then(
      () => undefined,
      (error: unknown) => error,
    );

  beforeAll(async () => {
    cp = await startTestControlPlane();
    ({ pipeline_id: pipelineId } = await cp.client.createPipeline({
      name: "evolving",
      catalog: "evolve",
      schema: "s",
      configuration: { "pipelines.rewind.enabled": "true" },
      definition: definition(cp.landing, "SELECT id, v FROM source"),
    }));
    await cp.land("1.json", [{ id: 1, v: "a" }]);
    expect((await run()).state).toBe("COMPLETED");
  });
  afterAll(() => cp?.close());

  it("evolves the table when a deploy adds a column; older rows read NULL, readers downstream get it", async () => {
    const before = (await cp.client.rewindPoints(pipelineId)).rewind_points[0]!.rewind_point_id;
    await deploy("SELECT id, v, upper(v) AS v_up FROM source");
    await cp.land("2.json", [{ id: 2, v: "b" }]);
    expect((await run()).state).toBe("COMPLETED");
    expect(await rows("raw")).toEqual([
      { id: 1, v: "a", v_up: null },
      { id: 2, v: "b", v_up: "B" },
    ]);
    expect(await rows("clean")).toEqual([
      { id: 1, v: "a", v_up: null },
      { id: 2, v: "b", v_up: "B" },
    ]);
    const history = (await cp.client.history("evolve.s.raw")).history;
    expect(history[0]).toMatchObject({ operation: "STREAMING UPDATE" });

    // A rewind to before the change restores the old schema; the replay evolves it again.
    const rewind = await run({ rewind_spec: { rewind_point_id: before } });
    expect(rewind.state).toBe("COMPLETED");
    expect(await rows("raw")).toEqual([{ id: 1, v: "a" }]);
    // GET pipeline says so until the next update has run.
    expect((await cp.client.getPipeline(pipelineId))["rewind"]).toMatchObject({
      rewound: true,
      replay_pending: true,
      rewound_by_update_id: rewind.update_id,
      rewind_point_id: before,
      rewound_at: expect.stringMatching(/^\d{4}-/),
    });
    expect((await run({ validate_only: true })).state).toBe("COMPLETED");
    expect((await cp.client.getPipeline(pipelineId))["rewind"]).toMatchObject({ replay_pending: true });
    expect((await run()).state).toBe("COMPLETED");
    expect((await cp.client.getPipeline(pipelineId))["rewind"]).toMatchObject({ rewound: false });
    expect(await rows("clean")).toEqual([
      { id: 1, v: "a", v_up: null },
      { id: 2, v: "b", v_up: "B" },
    ]);

    // The change feed across the RESTORE to before the column is refused as Delta refuses it,
    // naming the ranges that read (each in its last version's schema); the whole range reads, since
    // the replay added the column back.
    const entries = (await cp.client.history("evolve.s.raw")).history;
    const restore = Number(entries.find((h) => h["operation"] === "RESTORE")!["version"]);
    const changes = async (from: number, to?: number) =>
      (
        await cp.client.changes("evolve.s.raw", {
          starting_version: from,
          ...(to ? { ending_version: to } : {}),
        })
      ).changes.map(({ id, v_up, _change_type }) => [id, v_up, _change_type]);
    const across = await refusal(changes(1, restore));
    expect(across).toMatchObject({
      status: 400,
      errorCode: "DELTA_CHANGE_DATA_FEED_INCOMPATIBLE_SCHEMA_CHANGE",
    });
    expect((across as Error).message).toContain(
      `table evolve.s.raw: the change data feed of versions 1 to ${restore} cannot be read in one schema: ` +
        `it crosses a schema change that is not additive at version ${restore} (column v_up is dropped`,
    );
    expect((across as Error).message).toContain(
      `Read versions 1 to ${restore - 1} and ${restore} to ${restore} separately`,
    );
    const statement = await cp.client.executeStatement({
      statement: `SELECT * FROM table_changes('evolve.s.raw', 1, ${restore})`,
    });
    // As Databricks answers it: the service's code, the error class first in the message.
    expect(statement.status).toMatchObject({ state: "FAILED", error: { error_code: "BAD_REQUEST" } });
    expect(statement.status.error!.message).toMatch(
      /^\[DELTA_CHANGE_DATA_FEED_INCOMPATIBLE_SCHEMA_CHANGE\] table evolve\.s\.raw: the change data feed of versions 1 to/,
    );
    expect(await changes(1, restore - 1)).toEqual([
      [1, null, "insert"],
      [2, "B", "insert"],
    ]);
    // In the RESTORE's own schema, without the column.
    expect(await changes(restore, restore)).toEqual([[2, undefined, "delete"]]);
    expect((await changes(1)).map(([id, , type]) => `${type} ${id}`)).toEqual([
      "insert 1",
      "insert 2",
      "delete 2",
      "insert 2",
    ]);
  });

  it("refuses a dropped column or a lossy type change before anything runs, naming the full refresh", async () => {
    const updates = (await cp.client.listUpdates(pipelineId)).updates.length;
    for (const sql of [
      "SELECT id, v FROM source",
      "SELECT id, v, length(v) AS v_up FROM source",
      "SELECT CAST(id AS VARCHAR) AS id, v, upper(v) AS v_up FROM source",
    ]) {
      await deploy(sql);
      for (const body of [{ validate_only: true }, {}]) {
        const refused = await refusal(cp.client.startUpdate(pipelineId, body));
        expect(refused, sql).toMatchObject({ status: 400, errorCode: "INCOMPATIBLE_SCHEMA_CHANGE" });
        expect((refused as Error).message).toContain(`"refresh": "FULL", "selection": ["raw"]`);
      }
    }
    expect((await cp.client.listUpdates(pipelineId)).updates.length).toBe(updates);

    // The recipe the message gives: the table is recreated from the new query, its reader refreshed too.
    const refreshed = await run({ refresh: "FULL", selection: ["raw", "clean"], reset_mode: "DROP" });
    expect(refreshed.state, refreshed.error?.message).toBe("COMPLETED");
    expect(await rows("raw")).toEqual([
      { id: "1", v: "a", v_up: "A" },
      { id: "2", v: "b", v_up: "B" },
    ]);
  });

  it("casts a narrower numeric type into the table's column without a change", async () => {
    await deploy(
      "SELECT CAST(id AS INTEGER) AS id, v, upper(v) AS v_up FROM source",
      "SELECT CAST(id AS BIGINT) AS id, v, v_up FROM source",
    );
    const refreshed = await run({ refresh: "FULL", selection: ["raw", "clean"], reset_mode: "DROP" });
    expect(refreshed.state, refreshed.error?.message).toBe("COMPLETED");
    await deploy(
      "SELECT CAST(id AS SMALLINT) AS id, v, upper(v) AS v_up FROM source",
      "SELECT CAST(id AS BIGINT) AS id, v, v_up FROM source",
    );
    await cp.land("3.json", [{ id: 3, v: "c" }]);
    const update = await run();
    expect(update.state, update.error?.message).toBe("COMPLETED");
    expect((await rows("raw")).map((r) => r["id"])).toEqual([1, 2, 3]);
  });

  it("refuses a column name Delta cannot hold: up front for an existing table, at the batch for a new one", async () => {
    const current = "SELECT CAST(id AS SMALLINT) AS id, v, upper(v) AS v_up FROM source";
    await deploy('SELECT CAST(id AS SMALLINT) AS id, v, upper(v) AS v_up, v AS "v copy" FROM source');
    for (const body of [{ validate_only: true }, {}]) {
      const refused = await refusal(cp.client.startUpdate(pipelineId, body));
      expect(refused).toMatchObject({ status: 400, errorCode: "DELTA_INVALID_CHARACTERS_IN_COLUMN_NAMES" });
      expect((refused as Error).message).toMatch(/column "v copy" of table raw has a character .*rename it/);
    }

    const withNewTable = definition(cp.landing, current);
    withNewTable.datasets.push({
      type: "streaming_table",
      name: "odd",
      flows: [
        {
          name: "odd_copy",
          source: { type: "stream", dataset: "raw" },
          sql: 'SELECT id AS "the id" FROM source',
        },
      ],
    });
    await cp.client.editPipeline(pipelineId, { definition: withNewTable });
    const failed = await run();
    expect(failed.state).toBe("FAILED");
    expect(failed.error?.message).toMatch(/column "the id" of table odd has a character .*rename it/);

    // The way out: rename it and run again.
    withNewTable.datasets[2]!.flows[0]!.sql = 'SELECT id AS "the_id" FROM source';
    await cp.client.editPipeline(pipelineId, { definition: withNewTable });
    const fixed = await run();
    expect(fixed.state, fixed.error?.message).toBe("COMPLETED");
    const odd = await cp.client.query("evolve.s.odd", { sql: "SELECT the_id FROM t ORDER BY the_id" });
    expect(odd.rows.map((r) => r["the_id"])).toEqual((await rows("raw")).map((r) => r["id"]));
  });
});
