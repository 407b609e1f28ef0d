import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  createIngestPipelines,
  startTestControlPlane,
  type TestControlPlane,
} from "../support/control-plane.ts";
import {
  ROOT_TABLE,
  runSeedScenario,
  seedPipelineWithBadBatch,
  type SeedClient,
  type SeedPipeline,
} from "../support/seed-scenario.ts";
import { PYTHON, requireInstalled, runProgram } from "./client-processes.ts";

/**
 * The Databricks Python SDK (databricks-sdk, pinned in python/requirements.txt) against the local
 * runtime: the seed's Python snippets as written (python/seed_steps.py), configured only by host and
 * token — DATABRICKS_HOST / DATABRICKS_TOKEN, or a profile in DATABRICKS_CONFIG_FILE.
 */

const STEPS = path.join(import.meta.dirname, "python", "seed_steps.py");
const PROFILE = "ebb";

describe("the Databricks Python SDK", () => {
  let cp: TestControlPlane;
  let configDir: string;
  let seed: SeedPipeline;

  const python = async (step: string, args: Record<string, unknown>, viaProfile = false) => {
    const auth: Record<string, string> = viaProfile
      ? { DATABRICKS_CONFIG_FILE: path.join(configDir, "databrickscfg") }
      : { DATABRICKS_HOST: cp.plane.endpoint, DATABRICKS_TOKEN: cp.plane.token };
    const out = await runProgram(requireInstalled(PYTHON), [STEPS, step, JSON.stringify(args)], auth);
    const line = out.split("\n").find((l) => l.startsWith("RESULT "));
    if (!line) throw new Error(`${step} printed no result:\n${out}`);
    return JSON.parse(line.slice("RESULT ".length)) as Record<string, unknown>;
  };

  const client: SeedClient = {
    rewindPoints: async (pipelineId) =>
      (await python("find_point", { pipeline_id: pipelineId }))["points"] as {
        id: string;
        timestamp: string;
      }[],
    rewindToPoint: async (pipelineId, pointId, dryRun) =>
      (
        await python(dryRun ? "dry_run_point" : "rewind_point", {
          pipeline_id: pipelineId,
          rewind_point_id: pointId,
          root_table: ROOT_TABLE,
        })
      )["update_id"] as string,
    // The typed RewindSpec for the rehearsal (through a profile, as the seed writes it), the REST
    // client's body for the rewind itself.
    rewindToTimestamp: async (pipelineId, timestamp, dryRun) =>
      (
        await (dryRun
          ? python(
              "rewind_timestamp_typed",
              {
                pipeline_id: pipelineId,
                rewind_timestamp: timestamp,
                root_table: ROOT_TABLE,
                profile: PROFILE,
                dry_run: true,
              },
              true,
            )
          : python("rewind_timestamp", {
              pipeline_id: pipelineId,
              rewind_timestamp: timestamp,
              root_table: ROOT_TABLE,
            }))
      )["update_id"] as string,
    replay: async (pipelineId) =>
      (await python("replay", { pipeline_id: pipelineId }))["update_id"] as string,
    waitForUpdate: async (pipelineId, updateId) =>
      (await python("wait", { pipeline_id: pipelineId, update_id: updateId }))["state"] as string,
  };

  beforeAll(async () => {
    cp = await startTestControlPlane();
    configDir = await mkdtemp(path.join(os.tmpdir(), "ebb-databricks-"));
    await writeFile(
      path.join(configDir, "databrickscfg"),
      `[${PROFILE}]\nhost = ${cp.plane.endpoint}\ntoken = ${cp.plane.token}\n`,
    );
    seed = await seedPipelineWithBadBatch(cp);
  });
  afterAll(async () => {
    if (seed) await cp.client.deletePipeline(seed.pipelineId, true);
    await cp?.close();
    if (configDir) await rm(configDir, { recursive: true, force: true });
  });

  it("runs the seed's scenario: find a point, dry run, rewind by point and by timestamp, replay", async () => {
    await runSeedScenario(cp, client, seed);
  });

  it("runs the seed's two SQL queries with statement_execution.execute_statement", async () => {
    const seedSql = (file: string) =>
      readFile(path.join(import.meta.dirname, "..", "support", "seed-sql", file), "utf8");
    const listing = await python("sql", {
      statement: (await seedSql("rewind-points.sql")).replace("<pipeline-id>", seed.pipelineId),
    });
    expect(listing["columns"]).toEqual([
      ["rewind_point_id", "STRING"],
      ["timestamp", "TIMESTAMP"],
      ["message", "STRING"],
    ]);
    const points = (await cp.client.rewindPoints(seed.pipelineId)).rewind_points;
    expect((listing["rows"] as string[][]).map(([id]) => id).sort()).toEqual(
      points.map((p) => p.rewind_point_id).sort(),
    );
    const onset = await python("sql", {
      statement: (await seedSql("onset.sql")).replace("(event_date >= '2026-09-29')", "(amount < 0)"),
    });
    // The recipe scans from version 1, past the scenario's rewinds: the endpoint from there too.
    const expected = await cp.client.onset(ROOT_TABLE, { predicate: "amount < 0", starting_version: 1 });
    expect(onset["rows"]).toEqual([[expected["rewind_timestamp"]]]);
  });

  it("parses get, list_pipelines, list_updates and the paged event log into the SDK's dataclasses", async () => {
    const seen = await python("inspect", { pipeline_id: seed.pipelineId, page_size: 2 });
    const pipeline = seen["pipeline"] as Record<string, unknown>;
    expect(pipeline).toMatchObject({
      pipeline_id: seed.pipelineId,
      state: "IDLE",
      spec: { catalog: "catalog", schema: "schema", continuous: false },
    });
    expect((pipeline["latest_updates"] as unknown[]).length).toBeGreaterThan(0);
    expect(seen["listed"]).toEqual([
      expect.objectContaining({
        pipeline_id: seed.pipelineId,
        state: "IDLE",
        latest_updates: expect.any(Array),
      }),
    ]);
    const updates = (seen["updates"] as { updates: Record<string, unknown>[] }).updates;
    expect(updates[0]).toMatchObject({ pipeline_id: seed.pipelineId, state: "COMPLETED", mode: "DEFAULT" });
    // The SDK followed next_page_token across pages of two: every event, each once.
    const paged = seen["events_paged"] as { id: string; event_type: string; origin: object }[];
    expect(seen["first_page_has_next"]).toBe(true);
    expect(paged.length).toBe(seen["events_total"]);
    expect(new Set(paged.map((e) => e.id)).size).toBe(paged.length);
    expect(paged[0]).toMatchObject({ origin: { pipeline_id: seed.pipelineId }, level: expect.any(String) });
  });

  it("pages the seed's rewind-point lookup and list_pipelines past three pages", async () => {
    const pageSize = 2;
    const others = await createIngestPipelines(cp, 2 * pageSize, "python_sdk");
    try {
      for (let i = 0; i < 2 * pageSize; i++) await cp.client.captureRewindPoint(seed.pipelineId);
      const seen = await python("paged_listings", { pipeline_id: seed.pipelineId, page_size: pageSize });
      const summaries = await cp.client.events(seed.pipelineId, {
        filter: "event_type = 'rewind_summary'",
        max_results: 1000,
      });
      expect(summaries.events.length).toBeGreaterThan(2 * pageSize);
      expect(seen["rewind_summaries"]).toEqual(summaries.events.map((e) => e.id));
      const listed = (await cp.client.listPipelines()).statuses.map((p) => p.pipeline_id);
      expect(listed.length).toBeGreaterThan(2 * pageSize);
      expect(seen["pipelines"]).toEqual(listed);
    } finally {
      for (const other of others) await cp.client.deletePipeline(other, true);
    }
  });

  it("stops the pipeline and waits with the SDK's own waiter until it is IDLE", async () => {
    const stopped = await python("stop", { pipeline_id: seed.pipelineId });
    expect(stopped["pipeline"]).toMatchObject({ pipeline_id: seed.pipelineId, state: "IDLE" });
  });
});
