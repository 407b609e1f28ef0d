import { mkdtemp, readFile, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ingestPipeline, startTestControlPlane, type TestControlPlane } from "../support/control-plane.ts";
import { CLIENTS_DIR, requireInstalled, runProgram } from "./client-processes.ts";

/**
 * schemathesis (pinned in schemathesis/requirements.txt) generates requests from the OpenAPI document
 * the API serves (`GET /api/2.0/openapi.json`) and sends them to the local runtime: every answer is
 * below 500, matches the document (a refusal is `{error_code, message}`), and a refused request
 * changes nothing (schemathesis/hooks.py). Path parameters name a real pipeline and table, so valid
 * requests get past "not found".
 */

const SCHEMATHESIS = path.join(CLIENTS_DIR, "schemathesis", "bin", "schemathesis");
const CONFIG = path.join(import.meta.dirname, "schemathesis", "schemathesis.toml");
const HOOKS = path.join(import.meta.dirname, "schemathesis");

describe("schemathesis against the OpenAPI document", () => {
  let cp: TestControlPlane;
  let reports: string;
  let env: Record<string, string>;

  beforeAll(async () => {
    cp = await startTestControlPlane();
    reports = await mkdtemp(path.join(os.tmpdir(), "ebb-schemathesis-"));
    await cp.land("a.json", [{ id: 1 }, { id: 2 }]);
    const names = { catalog: "fuzz", schema: "openapi", path: cp.landing };
    const { pipeline_id } = await cp.client.createPipeline(ingestPipeline({ name: "fuzzed", ...names }));
    const { update_id } = await cp.client.startUpdate(pipeline_id, {});
    await cp.client.waitForUpdate(pipeline_id, update_id);
    const doomed = await cp.client.createPipeline(
      ingestPipeline({ name: "doomed", catalog: "fuzz", schema: "doomed", path: cp.landing }),
    );
    env = {
      EBB_ENDPOINT: cp.plane.endpoint,
      EBB_TOKEN: cp.plane.token,
      EBB_FUZZ_PIPELINE: pipeline_id,
      EBB_FUZZ_DOOMED: doomed.pipeline_id,
      EBB_FUZZ_TABLE: "fuzz.openapi.raw",
      SCHEMATHESIS_HOOKS: "hooks",
      PYTHONPATH: HOOKS,
      PYTHONDONTWRITEBYTECODE: "1",
    };
  });
  afterAll(async () => {
    await cp?.close();
    if (reports) await rm(reports, { recursive: true, force: true });
  });

  it("finds no 5xx, no answer outside the document, and no refusal that changed anything", async () => {
    const report = path.join(reports, "run.json");
    const out = await runProgram(
      requireInstalled(SCHEMATHESIS),
      [
        "--config-file",
        CONFIG,
        "run",
        `${cp.plane.endpoint}/api/2.0/openapi.json`,
        "--header",
        `Authorization: Bearer ${cp.plane.token}`,
        "--checks",
        "not_a_server_error,content_type_conformance,response_schema_conformance,refusal_changes_nothing",
        "--seed",
        "11",
        "--report",
        "json",
        "--report-json-path",
        report,
      ],
      env,
    ).catch((error: Error) => {
      throw new Error(error.message.slice(0, 20_000));
    });
    const run = JSON.parse(await readFile(report, "utf8")) as {
      operations: { total: number; tested: number };
      test_cases: { generated: number; with_failures: number; errored: number };
      failures: unknown[];
    };
    console.log(
      `schemathesis: ${run.test_cases.generated} cases over ${run.operations.tested} operations, ${run.test_cases.with_failures} failed`,
    );
    expect(run.failures, out.slice(-20_000)).toEqual([]);
    expect(run.test_cases).toMatchObject({ with_failures: 0, errored: 0 });
    expect(run.operations.tested).toBe(run.operations.total);
    expect(run.test_cases.generated).toBeGreaterThan(300);
  }, 1_800_000);
});
