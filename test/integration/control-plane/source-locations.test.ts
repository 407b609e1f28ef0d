import { mkdtemp, rm, symlink, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EnvironmentControlPlane } from "../../../functions/runtime/control-plane-from-env.ts";
import { EbbApiError } from "../../../shared/client/ebb-client.ts";
import { createPipeline } from "../../../shared/control/pipelines/pipeline-commands.ts";
import { CodedError } from "../../../shared/errors/coded-error.ts";
import { ingestPipeline, startTestControlPlane, type TestControlPlane } from "../../support/control-plane.ts";

/**
 * Where a source may read from: on the local runtime, folders under its roots only (the test plane's
 * root is a fresh folder of its own, so the test holds wherever the checkout lies); on AWS, S3 only; control characters in a path never. Each refusal
 * has its own code and names the field.
 */

const definition = (sourcePath: string, name = "locations") =>
  ingestPipeline({ name, catalog: "locations", schema: name, path: sourcePath });

const FIELD = "datasets[0].flows[0].source.path";

describe("source locations", () => {
  let cp: TestControlPlane;
  let root: string;
  let outside: string;

  beforeAll(async () => {
    // The root and a folder outside it are siblings: neither depends on where the checkout lies (a
    // folder under the working directory is inside the temporary folder when the clone is).
    root = await mkdtemp(path.join(os.tmpdir(), "ebb-root-"));
    outside = await mkdtemp(path.join(os.tmpdir(), "ebb-outside-"));
    await writeFile(path.join(outside, "a.json"), '{"id": 1}\n');
    cp = await startTestControlPlane({ localRoots: [root] });
  });
  afterAll(async () => {
    await cp?.close();
    await rm(root, { recursive: true, force: true });
    await rm(outside, { recursive: true, force: true });
  });

  const refusal = async (call: Promise<unknown>): Promise<EbbApiError> => {
    const error = await call.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(EbbApiError);
    return error as EbbApiError;
  };

  it("refuses a local folder outside the runtime's roots, naming the field and the flag", async () => {
    for (const location of ["/etc", outside]) {
      const error = await refusal(cp.client.createPipeline(definition(location)));
      expect(error.status).toBe(400);
      expect(error.errorCode).toBe("LOCAL_PATH_NOT_ALLOWED");
      expect(error.message).toContain(FIELD);
      expect(error.message).toContain("--allow-local-path");
    }
    expect((await cp.client.listPipelines()).statuses.map((s) => s.name)).not.toContain("locations");
  });

  it("refuses a definition file outside the roots", async () => {
    const file = path.join(outside, "pipeline.json");
    await writeFile(file, JSON.stringify(definition(cp.landing).definition));
    const { definition: _inline, ...settings } = definition(cp.landing);
    const error = await refusal(
      cp.client.createPipeline({ ...settings, libraries: [{ file: { path: file } }] }),
    );
    expect(error.errorCode).toBe("LOCAL_PATH_NOT_ALLOWED");
    expect(error.message).toContain("libraries[].file.path");
  });

  it("refuses control characters in local and S3 paths", async () => {
    for (const location of [`${cp.landing}/a\u0000b`, `${cp.landing}\nx`, "s3://bucket/raw/\u001b[2J"]) {
      const error = await refusal(cp.client.createPipeline(definition(location)));
      expect(error.errorCode).toBe("PATH_CONTROL_CHARACTER");
      expect(error.message).toContain(FIELD);
    }
  });

  it("accepts a folder under a root, and a run does not follow a symbolic link out of it", async () => {
    await cp.land("a.json", [{ id: 1 }]);
    const { pipeline_id: good } = await cp.client.createPipeline(definition(cp.landing, "inside"));
    const ran = await cp.client.startUpdate(good);
    expect((await cp.client.waitForUpdate(good, ran.update_id, { intervalMs: 200 })).state).toBe("COMPLETED");

    const linkDir = await mkdtemp(path.join(root, "ebb-link-"));
    const link = path.join(linkDir, "escape");
    await symlink(outside, link);
    try {
      const { pipeline_id: linked } = await cp.client.createPipeline(definition(link, "linked"));
      const { update_id } = await cp.client.startUpdate(linked);
      const update = await cp.client.waitForUpdate(linked, update_id, { intervalMs: 200 });
      expect(update.state).toBe("FAILED");
      expect(update.error?.error_code).toBe("LOCAL_PATH_NOT_ALLOWED");
    } finally {
      await rm(linkDir, { recursive: true, force: true });
    }
  });

  it("fails a run whose s3:// source names a bucket that does not exist with the bucket's name, not INTERNAL_ERROR", async () => {
    const { pipeline_id } = await cp.client.createPipeline(
      definition("s3://no-such-landing-bucket/orders/", "no_bucket"),
    );
    const { update_id } = await cp.client.startUpdate(pipeline_id);
    const update = await cp.client.waitForUpdate(pipeline_id, update_id, { intervalMs: 200 });
    expect(update.state).toBe("FAILED");
    expect(update.error?.error_code).toBe("RESOURCE_DOES_NOT_EXIST");
    expect(update.error?.message).toContain(
      "the S3 bucket no-such-landing-bucket does not exist (reading s3://no-such-landing-bucket/orders/)",
    );
  });

  it("on AWS (no local roots) accepts only s3:// locations", async () => {
    const aws = new EnvironmentControlPlane({ ...process.env, EBB_LOCAL_ROOTS: "" });
    const error = await createPipeline(aws, { ...definition(cp.landing, "on_aws"), dry_run: true }).catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(CodedError);
    expect(error).toMatchObject({ errorCode: "S3_LOCATION_REQUIRED" });
    expect((error as Error).message).toContain(FIELD);
    expect(() => aws.locate(cp.landing)).toThrow(/reads sources from S3 only/);
    const planned = await createPipeline(aws, {
      ...definition("s3://landing-bucket/raw/", "on_aws"),
      dry_run: true,
    });
    expect(planned).toHaveProperty("effective_settings");
  });
});
