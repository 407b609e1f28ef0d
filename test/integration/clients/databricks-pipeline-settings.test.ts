import { WorkspaceClient } from "@databricks/sdk-experimental";
import { writeFile } from "node:fs/promises";
import path from "node:path";
import { stringify } from "yaml";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestControlPlane, type TestControlPlane } from "../../support/control-plane.ts";
import { BAD_SQL, FIXED_SQL, seedDefinition } from "../../support/seed-scenario.ts";

/**
 * Databricks-shaped pipeline settings (CreatePipeline / EditPipeline as a user's script sends them,
 * here through the Databricks TypeScript SDK): `libraries` naming a definition file, `target`,
 * `trigger`, `dry_run`, `allow_duplicate_names`, `expected_last_modified`; the fields Ebb does not act
 * on reported back by name; fields no pipeline has still refused.
 */

describe("Databricks-shaped pipeline settings", () => {
  let cp: TestControlPlane;
  let w: WorkspaceClient;
  let definitionFile: string;
  const name = `databricks-shaped ${Date.now()}`;

  const refusal = (promise: Promise<unknown>) =>
    promise.then(
      () => expect.fail("the request was accepted"),
      (error: unknown) => error as { errorCode: string; message: string },
    );

  beforeAll(async () => {
    cp = await startTestControlPlane();
    w = new WorkspaceClient({ host: cp.plane.endpoint, token: cp.plane.token, authType: "pat" });
    definitionFile = path.join(cp.landing, "..", `${path.basename(cp.landing)}-pipeline.yaml`);
    await writeFile(definitionFile, stringify(seedDefinition(cp.landing, BAD_SQL)));
  });
  afterAll(() => cp?.close());

  it("creates from a definition file in libraries, schema from target, and reports the ignored fields", async () => {
    const created = (await w.pipelines.create({
      name,
      catalog: "dbx",
      target: "shaped",
      configuration: { "pipelines.rewind.betaEnabled": "true" },
      libraries: [{ file: { path: definitionFile } }],
      channel: "PREVIEW",
      development: true,
      photon: true,
      edition: "ADVANCED",
      clusters: [{ label: "default", num_workers: 2 }],
      trigger: { manual: {} },
      allow_duplicate_names: false,
    })) as { pipeline_id: string; ignored_settings?: { field: string; reason: string }[] };
    expect(created.pipeline_id).toEqual(expect.any(String));
    expect(created.ignored_settings?.map((s) => s.field).sort()).toEqual([
      "channel",
      "clusters",
      "development",
      "edition",
      "photon",
    ]);
    expect(created.ignored_settings?.every((s) => s.reason.length > 0)).toBe(true);

    const pipeline = await w.pipelines.get({ pipeline_id: created.pipeline_id });
    expect(pipeline).toMatchObject({
      pipeline_id: created.pipeline_id,
      name,
      state: "IDLE",
      spec: { catalog: "dbx", schema: "shaped", continuous: false },
    });
    const { datasets } = await cp.client.datasets(created.pipeline_id);
    expect(datasets.map((d) => d["name"]).sort()).toEqual(["clean", "table", "totals"]);
  });

  it("edits through the SDK's update (the body repeats the pipeline id), honouring expected_last_modified", async () => {
    const listed = (await cp.client.listPipelines()).statuses.find((p) => p.name === name)!;
    const before = await w.pipelines.get({ pipeline_id: listed.pipeline_id });
    await writeFile(definitionFile, stringify(seedDefinition(cp.landing, FIXED_SQL)));
    await w.pipelines.update({
      pipeline_id: listed.pipeline_id,
      id: listed.pipeline_id,
      name,
      libraries: [{ file: { path: definitionFile } }],
      expected_last_modified: before.last_modified!,
      notifications: [{ email_recipients: ["ops@example.com"], alerts: ["on-update-failure"] }],
    });
    const after = await cp.client.getPipeline(listed.pipeline_id);
    expect(after["definition_version"]).toBe(2);
    const stale = await refusal(
      cp.client.editPipeline(listed.pipeline_id, { expected_last_modified: before.last_modified }),
    );
    expect(stale.errorCode).toBe("RESOURCE_CONFLICT");
    const other = await refusal(cp.client.editPipeline(listed.pipeline_id, { pipeline_id: "another" }));
    expect(other).toMatchObject({ errorCode: "INVALID_PARAMETER_VALUE" });
    expect(other.message).toContain("pipeline_id");
  });

  it("answers effective_settings for a dry run and creates nothing", async () => {
    // Pipelines named "dry": other test files share the stand-ins' tables and create their own.
    const dry = async () => (await cp.client.listPipelines()).statuses.filter((p) => p.name === "dry").length;
    const before = await dry();
    const answer = await cp.client.request<Record<string, unknown>>("POST", "/api/2.0/pipelines", {
      body: {
        name: "dry",
        catalog: "dbx",
        schema: "dry",
        definition: seedDefinition(cp.landing, BAD_SQL),
        dry_run: true,
      },
    });
    expect(answer).not.toHaveProperty("pipeline_id");
    expect(answer["effective_settings"]).toMatchObject({ name: "dry", catalog: "dbx", schema: "dry" });
    expect(await dry()).toBe(before);
  });

  it("refuses a duplicate name when asked to, fields no pipeline has, and libraries Ebb cannot read", async () => {
    const body = { catalog: "dbx", schema: "other", definition: seedDefinition(cp.landing, BAD_SQL) };
    const duplicate = await refusal(
      cp.client.createPipeline({ ...body, name, allow_duplicate_names: false }),
    );
    expect(duplicate.errorCode).toBe("RESOURCE_ALREADY_EXISTS");
    const typo = await refusal(cp.client.createPipeline({ ...body, name: "x", photonn: true }));
    expect(typo).toMatchObject({ errorCode: "INVALID_PARAMETER_VALUE" });
    expect(typo.message).toContain('"photonn"');
    const { definition: _inline, ...withoutDefinition } = body;
    const notebook = await refusal(
      cp.client.createPipeline({
        ...withoutDefinition,
        name: "x",
        libraries: [{ notebook: { path: "/Users/me/etl" } }],
      }),
    );
    expect(notebook.message).toContain("notebook");
    const missing = await refusal(
      cp.client.createPipeline({
        ...withoutDefinition,
        name: "x",
        libraries: [{ file: { path: `${definitionFile}.missing` } }],
      }),
    );
    expect(missing).toMatchObject({ errorCode: "INVALID_PARAMETER_VALUE" });
    expect(missing.message).toContain(`${definitionFile}.missing`);
  });
});
