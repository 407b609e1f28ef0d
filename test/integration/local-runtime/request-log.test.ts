import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ingestPipeline, startTestControlPlane, type TestControlPlane } from "../../support/control-plane.ts";

/**
 * The local runtime's log (issue 39): one JSON line per request and per task in a file, so the request
 * id a client got back (header and error body) finds its line, and a failed update's task line names
 * the update, the flow and the error code. No row data in it.
 */
describe("the local runtime's request log", () => {
  let cp: TestControlPlane;
  let folder: string;
  let logFile: string;

  beforeAll(async () => {
    folder = await mkdtemp(path.join(os.tmpdir(), "ebb-log-"));
    logFile = path.join(folder, "logs", "ebb.log");
    cp = await startTestControlPlane({ log: { file: logFile } });
  });
  afterAll(async () => {
    await cp?.close();
    await rm(folder, { recursive: true, force: true });
  });

  const logLines = async () =>
    (await readFile(logFile, "utf8"))
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as Record<string, unknown>);

  it("finds the request id the client got, for a refused request and for a failed update", async () => {
    const suffix = Date.now().toString(36);
    const { pipeline_id } = await cp.client.createPipeline(
      ingestPipeline({ name: `log_${suffix}`, catalog: "main", schema: `log_${suffix}`, path: cp.landing }),
    );
    const secret = "row-value-never-logged";
    await writeFile(path.join(cp.landing, "bad.json"), `{"id": "${secret}"\n`);

    const start = await fetch(`${cp.plane.endpoint}/api/2.0/pipelines/${pipeline_id}/updates`, {
      method: "POST",
      headers: { authorization: `Bearer ${cp.plane.token}`, "content-type": "application/json" },
      body: "{}",
    });
    expect(start.status).toBe(200);
    const startRequestId = start.headers.get("x-request-id");
    expect(startRequestId).toBeTruthy();
    const { update_id } = (await start.json()) as { update_id: string };
    const failed = await cp.client.waitForUpdate(pipeline_id, update_id, { intervalMs: 200 });
    expect(failed.state).toBe("FAILED");

    const refused = await fetch(`${cp.plane.endpoint}/api/2.0/pipelines/${pipeline_id}/updates/nope`, {
      headers: { authorization: `Bearer ${cp.plane.token}` },
    });
    const refusal = (await refused.json()) as { error_code: string; request_id: string };
    expect(refusal.request_id).toBe(refused.headers.get("x-request-id"));

    const lines = await logLines();
    expect(lines.find((line) => line["request_id"] === startRequestId)).toMatchObject({
      message: "request",
      method: "POST",
      route: "/api/2.0/pipelines/{pipeline_id}/updates",
      status: 200,
      pipeline_id,
      duration_ms: expect.any(Number),
    });
    expect(lines.find((line) => line["request_id"] === refusal.request_id)).toMatchObject({
      message: "request",
      status: refused.status,
      error_code: refusal.error_code,
      pipeline_id,
    });
    const failedTask = lines.find(
      (line) => line["message"] === "task" && line["update_id"] === update_id && line["status"] === "FAILED",
    );
    expect(failedTask).toMatchObject({ pipeline_id, flow: "ingest", error_code: failed.error?.error_code });
    expect(await readFile(logFile, "utf8")).not.toContain(secret);
  });
});
