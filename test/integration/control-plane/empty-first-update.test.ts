import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { ingestPipeline, startTestControlPlane, type TestControlPlane } from "../../support/control-plane.ts";

/**
 * A pipeline's first update over an empty landing folder: as on Databricks, the streaming table is
 * created empty (with its flow's columns), so the materialized view that reads it is refreshed to
 * zero rows instead of failing on a table that does not exist yet; the next file lands as usual.
 */

let cp: TestControlPlane;

beforeAll(async () => {
  cp = await startTestControlPlane();
});
afterAll(() => cp?.close());

it("creates the streaming table empty, so the view over it refreshes", async () => {
  const folder = path.join(cp.landing, "empty_first");
  await mkdir(folder);
  const settings = ingestPipeline({
    name: "empty first update",
    catalog: "empty",
    schema: "first",
    path: folder,
  });
  settings.definition.datasets.push({
    type: "materialized_view",
    name: "totals",
    sql: "SELECT count(*) AS n, sum(id) AS total FROM raw",
  } as never);
  const { pipeline_id: pipelineId } = await cp.client.createPipeline(settings);
  const run = async () => {
    const { update_id } = await cp.client.startUpdate(pipelineId);
    return cp.client.waitForUpdate(pipelineId, update_id, { intervalMs: 200 });
  };
  const rows = async (table: string, sql: string) =>
    (await cp.client.query(`empty.first.${table}`, { sql })).rows;

  const first = await run();
  expect(first.state, first.error?.message).toBe("COMPLETED");
  expect(await rows("raw", "SELECT count(*) AS n FROM t")).toEqual([{ n: 0 }]);
  expect(await rows("totals", "SELECT n, total FROM t")).toEqual([{ n: 0, total: null }]);

  await writeFile(path.join(folder, "1.json"), '{"id": 4}\n{"id": 5}\n');
  const second = await run();
  expect(second.state, second.error?.message).toBe("COMPLETED");
  expect(await rows("raw", "SELECT id FROM t ORDER BY id")).toEqual([{ id: 4 }, { id: 5 }]);
  expect(await rows("totals", "SELECT n, total FROM t")).toEqual([{ n: 2, total: 9 }]);
});
