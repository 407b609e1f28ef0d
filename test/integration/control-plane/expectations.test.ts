import { mkdir, readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestControlPlane, type TestControlPlane } from "../../support/control-plane.ts";

/**
 * Expectations (Databricks' data quality checks) through the API on the local runtime, over real files:
 * `warn` keeps and counts, `drop` removes and counts, `fail` fails the update with EXPECTATION_VIOLATION
 * and commits nothing of the batch; each flow_progress event carries the counts as Databricks shapes
 * them, and the event log's SQL reads them.
 */

describe("expectations", () => {
  let cp: TestControlPlane;

  beforeAll(async () => {
    cp = await startTestControlPlane();
  });
  afterAll(() => cp?.close());

  type Expectation = { name: string; condition: string; on_violation?: string };

  /** A pipeline `<schema>` whose streaming table `orders` has `expectations`, over a folder of JSON files. */
  async function pipeline(schema: string, expectations: Expectation[], viewExpectations?: Expectation[]) {
    const folder = path.join(cp.landing, schema);
    await mkdir(folder);
    const definition = (expect: Expectation[]) => ({
      datasets: [
        {
          type: "streaming_table",
          name: "orders",
          expectations: expect,
          flows: [
            {
              name: "ingest",
              source: {
                type: "auto_loader",
                path: folder,
                format: "json",
                schema: { id: "BIGINT", amount: "BIGINT" },
              },
              sql: "SELECT id, amount FROM source",
            },
          ],
        },
        ...(viewExpectations
          ? [
              {
                type: "materialized_view",
                name: "totals",
                expectations: viewExpectations,
                sql: "SELECT id % 2 AS parity, sum(amount) AS total FROM orders GROUP BY 1",
              },
            ]
          : []),
      ],
    });
    const body = (expect: Expectation[]) => ({
      name: `expectations ${schema}`,
      catalog: "quality",
      configuration: { "pipelines.rewind.enabled": "true" },
      schema,
      definition: definition(expect),
    });
    const { pipeline_id: pipelineId } = await cp.client.createPipeline(body(expectations));
    return {
      pipelineId,
      land: (file: string, rows: { id: number; amount: number | null }[]) =>
        writeFile(path.join(folder, file), rows.map((row) => JSON.stringify(row)).join("\n") + "\n"),
      run: async (request?: unknown) => {
        const { update_id } = await cp.client.startUpdate(pipelineId, request);
        return {
          updateId: update_id,
          ...(await cp.client.waitForUpdate(pipelineId, update_id, { intervalMs: 200 })),
        };
      },
      edit: (expect: Expectation[]) => cp.client.editPipeline(pipelineId, body(expect)),
      ids: async (table = "orders") =>
        (await cp.client.query(`quality.${schema}.${table}`, { sql: "SELECT * FROM t ORDER BY ALL" })).rows,
      dataQuality: async (updateId: string) =>
        (
          await cp.client.events(pipelineId, { filter: `event_type = 'flow_progress'`, max_results: 100 })
        ).events
          .filter((event) => event.origin.update_id === updateId)
          .map(
            (event) =>
              (event.details as { flow_progress?: { data_quality?: unknown } }).flow_progress?.data_quality,
          )
          .filter((quality) => quality !== undefined && (quality as { expectations?: unknown }).expectations),
    };
  }

  it("warn keeps every row and counts the failures, drop removes them and counts them", async () => {
    const p = await pipeline("warn_drop", [
      { name: "positive_amount", condition: "amount > 0" },
      { name: "known_id", condition: "id < 100", on_violation: "DROP" },
    ]);
    await p.land("1.json", [
      { id: 1, amount: 5 },
      { id: 2, amount: -1 },
      { id: 300, amount: 7 },
      { id: 4, amount: null },
    ]);
    const done = await p.run();
    expect(done.state, done.error?.message).toBe("COMPLETED");
    expect(await p.ids()).toEqual([
      { id: 1, amount: 5 },
      { id: 2, amount: -1 },
      { id: 4, amount: null },
    ]);
    expect(await p.dataQuality(done.updateId)).toEqual([
      {
        quarantined_records: 0,
        dropped_records: 1,
        expectations: [
          // A NULL result is not TRUE: the row with no amount fails.
          { name: "positive_amount", dataset: "orders", passed_records: 2, failed_records: 2 },
          { name: "known_id", dataset: "orders", passed_records: 3, failed_records: 1 },
        ],
      },
    ]);
  });

  it("fail fails the update with EXPECTATION_VIOLATION, commits nothing, and a fixed definition runs the batch", async () => {
    const p = await pipeline("fail", [
      { name: "positive_amount", condition: "amount > 0", on_violation: "fail" },
    ]);
    await p.land("1.json", [{ id: 1, amount: 5 }]);
    expect((await p.run()).state).toBe("COMPLETED");
    await p.land("2.json", [
      { id: 2, amount: 6 },
      { id: 3, amount: -3 },
    ]);
    const failed = await p.run();
    expect(failed).toMatchObject({ state: "FAILED", error: { error_code: "EXPECTATION_VIOLATION" } });
    expect(failed.error?.message).toContain(
      `flow "ingest" failed expectation "positive_amount" of dataset "orders" (amount > 0) on 1 row, e.g. {"id":3,"amount":-3}`,
    );
    expect(failed.error?.message).toContain("on_violation to drop");
    expect(await p.ids()).toEqual([{ id: 1, amount: 5 }]);

    await p.edit([{ name: "positive_amount", condition: "amount > 0", on_violation: "drop" }]);
    const fixed = await p.run();
    expect(fixed.state, fixed.error?.message).toBe("COMPLETED");
    expect(await p.ids()).toEqual([
      { id: 1, amount: 5 },
      { id: 2, amount: 6 },
    ]);
    expect(await p.dataQuality(fixed.updateId)).toEqual([
      {
        quarantined_records: 0,
        dropped_records: 1,
        expectations: [{ name: "positive_amount", dataset: "orders", passed_records: 1, failed_records: 1 }],
      },
    ]);
  });

  it("fail runs the same batch once its data is fixed in its file", async () => {
    const p = await pipeline("fail_data", [
      { name: "positive_amount", condition: "amount > 0", on_violation: "fail" },
    ]);
    await p.land("1.json", [
      { id: 1, amount: 5 },
      { id: 2, amount: -2 },
    ]);
    const failed = await p.run();
    expect(failed).toMatchObject({ state: "FAILED", error: { error_code: "EXPECTATION_VIOLATION" } });
    await p.land("1.json", [
      { id: 1, amount: 5 },
      { id: 2, amount: 2 },
    ]);
    const fixed = await p.run();
    expect(fixed.state, fixed.error?.message).toBe("COMPLETED");
    expect(await p.ids()).toEqual([
      { id: 1, amount: 5 },
      { id: 2, amount: 2 },
    ]);
  });

  it("the event log's SQL reads the counts as Databricks' data quality query does", async () => {
    const p = await pipeline(
      "event_sql",
      [{ name: "positive_amount", condition: "amount > 0", on_violation: "drop" }],
      [{ name: "small_total", condition: "total < 10" }],
    );
    await p.land("1.json", [
      { id: 1, amount: 5 },
      { id: 2, amount: -1 },
      { id: 3, amount: 7 },
    ]);
    const done = await p.run();
    expect(done.state, done.error?.message).toBe("COMPLETED");
    // The view refreshed over the kept rows: parity 1 holds 5 + 7 = 12, which fails its warn expectation.
    expect(await p.ids("totals")).toEqual([{ parity: 1, total: 12 }]);
    const statement = (
      await readFile(new URL("../../support/seed-sql/data-quality.sql", import.meta.url), "utf8")
    )
      .replace("<pipeline-id>", p.pipelineId)
      .replace("<update-id>", done.updateId);
    const answer = await cp.client.executeStatement({ statement });
    expect(answer.status.state, JSON.stringify(answer.status)).toBe("SUCCEEDED");
    expect(answer.result?.data_array).toEqual([
      ["orders", "positive_amount", "2", "1"],
      ["totals", "small_total", "0", "1"],
    ]);
  });

  it("refuses a condition naming a column the flow's rows lack, naming the dataset, expectation and column", async () => {
    const p = await pipeline("unknown_column", [{ name: "positive_amount", condition: "amout > 0" }]);
    await p.land("1.json", [{ id: 1, amount: 5 }]);
    const failed = await p.run();
    expect(failed).toMatchObject({ state: "FAILED", error: { error_code: "EXPECTATION_CONDITION_INVALID" } });
    expect(failed.error?.message).toContain(
      'expectation "positive_amount" of dataset "orders" names the column "amout", which the rows of flow "ingest" do not have (their columns: id, amount)',
    );
    await p.edit([{ name: "positive_amount", condition: "amount" }]);
    const typed = await p.run();
    expect(typed.error?.message).toContain(
      'expectation "positive_amount" of dataset "orders" is a BIGINT, not a boolean',
    );
    await p.edit([{ name: "positive_amount", condition: "amount > 0" }]);
    const fixed = await p.run();
    expect(fixed.state, fixed.error?.message).toBe("COMPLETED");
    expect(await p.ids()).toEqual([{ id: 1, amount: 5 }]);
  });

  it("counts again what a replay after a rewind reprocesses", async () => {
    const p = await pipeline("replay", [
      { name: "positive_amount", condition: "amount > 0", on_violation: "drop" },
    ]);
    await p.land("1.json", [{ id: 1, amount: 5 }]);
    expect((await p.run()).state).toBe("COMPLETED");
    const point = (await cp.client.rewindPoints(p.pipelineId)).rewind_points[0]!.rewind_point_id;
    await p.land("2.json", [
      { id: 2, amount: -2 },
      { id: 3, amount: 3 },
      { id: 4, amount: 4 },
    ]);
    const second = await p.run();
    expect(second.state, second.error?.message).toBe("COMPLETED");
    const counted = {
      quarantined_records: 0,
      dropped_records: 1,
      expectations: [{ name: "positive_amount", dataset: "orders", passed_records: 2, failed_records: 1 }],
    };
    expect(await p.dataQuality(second.updateId)).toEqual([counted]);

    const rewound = await p.run({ rewind_spec: { rewind_point_id: point } });
    expect(rewound.state, rewound.error?.message).toBe("COMPLETED");
    expect(await p.ids()).toEqual([{ id: 1, amount: 5 }]);
    const replay = await p.run();
    expect(replay.state, replay.error?.message).toBe("COMPLETED");
    expect(await p.dataQuality(replay.updateId)).toEqual([counted]);
    expect(await p.ids()).toEqual([
      { id: 1, amount: 5 },
      { id: 3, amount: 3 },
      { id: 4, amount: 4 },
    ]);
  });

  it("applies to an AUTO CDC flow's change events, before the MERGE", async () => {
    const folder = path.join(cp.landing, "cdc");
    await mkdir(folder);
    const { pipeline_id: pipelineId } = await cp.client.createPipeline({
      name: "expectations cdc",
      catalog: "quality",
      schema: "cdc",
      definition: {
        datasets: [
          {
            type: "streaming_table",
            name: "users",
            expectations: [
              {
                name: "known_city",
                condition: "city IS NOT NULL OR operation = 'DELETE'",
                on_violation: "drop",
              },
            ],
            flows: [
              {
                name: "users_cdc",
                source: {
                  type: "auto_loader",
                  path: folder,
                  format: "json",
                  schema: { userId: "BIGINT", city: "VARCHAR", operation: "VARCHAR", sequenceNum: "BIGINT" },
                },
                sql: "SELECT * FROM source",
                auto_cdc: {
                  keys: ["userId"],
                  sequence_by: "sequenceNum",
                  apply_as_deletes: "operation = 'DELETE'",
                  except_column_list: ["operation", "sequenceNum"],
                },
              },
            ],
          },
        ],
      },
    });
    const events = [
      { userId: 1, city: "Oaxaca", operation: "UPSERT", sequenceNum: 1 },
      { userId: 2, city: "Tijuana", operation: "UPSERT", sequenceNum: 2 },
      // Dropped before the MERGE: user 1 keeps Oaxaca.
      { userId: 1, city: null, operation: "UPSERT", sequenceNum: 3 },
      { userId: 2, city: null, operation: "DELETE", sequenceNum: 4 },
    ];
    await writeFile(path.join(folder, "1.json"), events.map((e) => JSON.stringify(e)).join("\n") + "\n");
    const { update_id } = await cp.client.startUpdate(pipelineId);
    const done = await cp.client.waitForUpdate(pipelineId, update_id, { intervalMs: 200 });
    expect(done.state, done.error?.message).toBe("COMPLETED");
    expect(
      (await cp.client.query("quality.cdc.users", { sql: "SELECT * FROM t ORDER BY ALL" })).rows,
    ).toEqual([{ userId: 1, city: "Oaxaca" }]);
    const quality = (await cp.client.events(pipelineId, { filter: "event_type = 'flow_progress'" })).events
      .map(
        (event) =>
          (event.details as { flow_progress?: { data_quality?: { expectations?: unknown } } }).flow_progress
            ?.data_quality,
      )
      .filter((q) => q?.expectations);
    expect(quality).toEqual([
      {
        quarantined_records: 0,
        dropped_records: 1,
        expectations: [{ name: "known_city", dataset: "users", passed_records: 3, failed_records: 1 }],
      },
    ]);
  });

  it("applies to a stateful flow's output: the rows its deduplication keeps", async () => {
    const folder = path.join(cp.landing, "dedup");
    await mkdir(folder);
    const { pipeline_id: pipelineId } = await cp.client.createPipeline({
      name: "expectations dedup",
      catalog: "quality",
      schema: "dedup",
      definition: {
        datasets: [
          {
            type: "streaming_table",
            name: "orders",
            expectations: [{ name: "positive_amount", condition: "amount > 0", on_violation: "drop" }],
            flows: [
              {
                name: "ingest",
                source: {
                  type: "auto_loader",
                  path: folder,
                  format: "json",
                  schema: { id: "BIGINT", amount: "BIGINT" },
                },
                sql: "SELECT id, amount FROM source",
                drop_duplicates: { keys: ["id"] },
              },
            ],
          },
        ],
      },
    });
    const rows = [
      { id: 1, amount: 5 },
      { id: 1, amount: 5 },
      { id: 2, amount: -1 },
      { id: 2, amount: -1 },
      { id: 3, amount: 3 },
    ];
    await writeFile(path.join(folder, "1.json"), rows.map((r) => JSON.stringify(r)).join("\n") + "\n");
    const { update_id } = await cp.client.startUpdate(pipelineId);
    const done = await cp.client.waitForUpdate(pipelineId, update_id, { intervalMs: 200 });
    expect(done.state, done.error?.message).toBe("COMPLETED");
    expect(
      (await cp.client.query("quality.dedup.orders", { sql: "SELECT * FROM t ORDER BY ALL" })).rows,
    ).toEqual([
      { id: 1, amount: 5 },
      { id: 3, amount: 3 },
    ]);
    const progress = (await cp.client.events(pipelineId, { filter: "event_type = 'flow_progress'" })).events
      .map(
        (event) =>
          (event.details as { flow_progress?: { data_quality?: { expectations?: unknown } } }).flow_progress,
      )
      .filter((p) => p?.data_quality?.expectations);
    expect(progress).toEqual([
      expect.objectContaining({
        data_quality: {
          quarantined_records: 0,
          dropped_records: 1,
          expectations: [
            { name: "positive_amount", dataset: "orders", passed_records: 2, failed_records: 1 },
          ],
        },
        state_operators: expect.objectContaining({ num_duplicates_dropped: 2 }),
      }),
    ]);
  });
});
