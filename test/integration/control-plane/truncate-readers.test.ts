import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestControlPlane, type TestControlPlane } from "../../support/control-plane.ts";

/**
 * `a → b (reset_mode: TRUNCATE) → c` through the API: a reader refreshed in the same update as its
 * TRUNCATE upstream continues; a reader left out fails with the documented message, and the refresh
 * the message names recovers it.
 */

describe("the readers of a TRUNCATE table", () => {
  let cp: TestControlPlane;
  let pipelineId: string;

  const run = async (body?: unknown) => {
    const { update_id } = await cp.client.startUpdate(pipelineId, body);
    return cp.client.waitForUpdate(pipelineId, update_id, { intervalMs: 200 });
  };
  const ids = async (table: string) =>
    (await cp.client.query(`trunc.r.${table}`, { sql: "SELECT id FROM t ORDER BY id" })).rows.map(
      (r) => r["id"],
    );

  beforeAll(async () => {
    cp = await startTestControlPlane();
    ({ pipeline_id: pipelineId } = await cp.client.createPipeline({
      name: "truncate readers",
      catalog: "trunc",
      schema: "r",
      definition: {
        datasets: [
          {
            type: "streaming_table",
            name: "a",
            flows: [
              {
                name: "fa",
                source: { type: "auto_loader", path: cp.landing, format: "json", schema: { id: "BIGINT" } },
                sql: "SELECT id FROM source",
              },
            ],
          },
          {
            type: "streaming_table",
            name: "b",
            reset_mode: "TRUNCATE",
            flows: [{ name: "fb", source: { type: "stream", dataset: "a" }, sql: "SELECT id FROM source" }],
          },
          {
            type: "streaming_table",
            name: "c",
            flows: [{ name: "fc", source: { type: "stream", dataset: "b" }, sql: "SELECT id FROM source" }],
          },
        ],
      },
    }));
    await cp.land("1.json", [{ id: 1 }, { id: 2 }]);
    expect((await run()).state).toBe("COMPLETED");
  });
  afterAll(() => cp?.close());

  it("continues a reader refreshed in the same update, and every later update", async () => {
    const refreshed = await run({ refresh: "FULL", selection: ["b", "c"] });
    expect(refreshed.state, refreshed.error?.message).toBe("COMPLETED");
    expect(await ids("c")).toEqual([1, 2]);
    await cp.land("2.json", [{ id: 3 }]);
    const next = await run();
    expect(next.state, next.error?.message).toBe("COMPLETED");
    expect(await ids("b")).toEqual([1, 2, 3]);
    expect(await ids("c")).toEqual([1, 2, 3]);
  });

  it("fails a reader left out with the documented message, and the refresh it names recovers it", async () => {
    expect((await run({ refresh: "FULL", selection: ["b"] })).state).toBe("COMPLETED");
    const failed = await run();
    expect(failed.state).toBe("FAILED");
    expect(failed.error?.error_code).toBe("UPSTREAM_FULLY_REFRESHED");
    expect(failed.error?.message).toContain(
      `flow "fc" cannot continue: its upstream b was fully refreshed (TRUNCATE`,
    );
    expect(failed.error?.message).toContain(`{"refresh": "FULL", "selection": [`);
    const recovered = await run({ refresh: "FULL", selection: ["c"] });
    expect(recovered.state, recovered.error?.message).toBe("COMPLETED");
    expect(await ids("c")).toEqual([1, 2, 3]);
    expect((await run()).state).toBe("COMPLETED");
  });
});
