import { mkdir } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestControlPlane, type TestControlPlane } from "../../support/control-plane.ts";

/**
 * validate_only binds each query over its inputs' schemas, through the HTTP API on the local
 * runtime (docs/api.md "Validating an update"): a misspelt column over landed files fails the update
 * with QUERY_DOES_NOT_BIND naming the flow and DuckDB's candidate; the same pipeline before any file
 * landed passes, saying which query it could not bind yet; a correct pipeline passes and writes
 * nothing; a view over a written table is bound too.
 */

const definition = (landing: string, sql: string, viewSql = "SELECT id, amount FROM orders") => ({
  datasets: [
    {
      type: "streaming_table",
      name: "orders",
      flows: [{ name: "ingest", source: { type: "auto_loader", path: landing, format: "json" }, sql }],
    },
    { type: "view", name: "big_orders", sql: `${viewSql} WHERE amount > 10` },
  ],
});

describe("validate_only binds each query", () => {
  let cp: TestControlPlane;
  beforeAll(async () => {
    cp = await startTestControlPlane();
  });
  afterAll(() => cp?.close());

  /** A pipeline over its own landing folder, with `rows` landed there first (when given). */
  const pipeline = async (schema: string, sql: string, rows?: Record<string, unknown>[]) => {
    const landing = path.join(cp.landing, schema);
    await mkdir(landing, { recursive: true });
    if (rows) await cp.land(`${schema}/1.json`, rows);
    const { pipeline_id } = await cp.client.createPipeline({
      name: `validate ${schema}`,
      catalog: "validate_bind",
      schema,
      definition: definition(landing, sql),
    });
    return { pipelineId: pipeline_id, landing };
  };
  const run = async (pipelineId: string, body: unknown) => {
    const { update_id } = await cp.client.startUpdate(pipelineId, body);
    return cp.client.waitForUpdate(pipelineId, update_id, { intervalMs: 200 });
  };
  const planning = async (pipelineId: string, updateId: string) => {
    const { events } = await cp.client.events(pipelineId, {
      filter: `event_type = 'planning_information' AND origin.update_id = '${updateId}'`,
    });
    return events[0]?.details as { planning_information?: Record<string, unknown> } | undefined;
  };

  it("fails a flow with a misspelt column over landed files, naming the flow and DuckDB's candidate", async () => {
    const { pipelineId } = await pipeline("typo", "SELECT id, amout FROM source", [{ id: 1, amount: 5 }]);
    const update = await run(pipelineId, { validate_only: true });
    expect(update).toMatchObject({ state: "FAILED", error: { error_code: "QUERY_DOES_NOT_BIND" } });
    const message = (update as { error?: { message?: string } }).error?.message ?? "";
    expect(message).toContain("orders.ingest");
    expect(message).toMatch(
      /Binder Error: Referenced column "amout" not found.*Candidate bindings: "amount"/,
    );
  });

  it("passes the same pipeline before any file landed, listing the flow it could not bind yet", async () => {
    const { pipelineId } = await pipeline("unlanded", "SELECT id, amout FROM source");
    const update = await run(pipelineId, { validate_only: true });
    expect(update.state).toBe("COMPLETED");
    expect((await planning(pipelineId, update.update_id))?.planning_information).toMatchObject({
      queries_not_bound: expect.arrayContaining([
        { query: "orders.ingest", reason: expect.stringContaining("no file has landed") },
        { query: "big_orders", reason: "table orders has no known columns yet" },
      ]),
    });
  });

  it("passes a correct pipeline and writes nothing; a view over the written table is bound too", async () => {
    const { pipelineId, landing } = await pipeline("correct", "SELECT id, amount FROM source", [
      { id: 1, amount: 50 },
    ]);
    expect((await run(pipelineId, { validate_only: true })).state).toBe("COMPLETED");
    await expect(
      cp.client.query("validate_bind.correct.orders", { sql: "SELECT * FROM t" }),
    ).rejects.toThrow();
    // Once the table is written, its view is bound over it, with the columns a deploy adds to its flow;
    // a misspelt column there is refused.
    expect((await run(pipelineId, {})).state).toBe("COMPLETED");
    await cp.client.editPipeline(pipelineId, {
      definition: definition(
        landing,
        "SELECT id, amount, amount * 2 AS doubled FROM source",
        "SELECT id, doubled AS amount FROM orders",
      ),
    });
    expect((await run(pipelineId, { validate_only: true })).state).toBe("COMPLETED");
    await cp.client.editPipeline(pipelineId, {
      definition: definition(landing, "SELECT id, amount FROM source", "SELECT id, amont FROM orders"),
    });
    const update = await run(pipelineId, { validate_only: true });
    expect(update).toMatchObject({ state: "FAILED", error: { error_code: "QUERY_DOES_NOT_BIND" } });
    expect((update as { error?: { message?: string } }).error?.message).toMatch(
      /big_orders.*Candidate bindings: "amount"/,
    );
  });
});
