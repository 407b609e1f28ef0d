import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EbbApiError } from "../../../shared/client/ebb-client.ts";
import { tablePrefix } from "../../../shared/store/bucket-layout.ts";
import { listAllKeys } from "../../../shared/object-store/object-store.ts";
import { testObjectStore } from "../../support/aws.ts";
import { startTestControlPlane, type TestControlPlane } from "../../support/control-plane.ts";

/**
 * One owner per table, through the API: a create or edit that declares a table another pipeline owns
 * is refused naming the owner; of concurrent creates exactly one wins; delete releases; a purge
 * removes only the pipeline's own tables; the claims live in DynamoDB, so a restarted runtime keeps
 * them; a streaming table kept by a delete is not taken by a new pipeline while it holds rows.
 */

const pipeline = (landing: string, schema: string, tables: readonly string[], name = "owner") => ({
  name,
  catalog: "owned",
  schema,
  definition: {
    datasets: tables.map((table) => ({
      type: "streaming_table",
      name: table,
      flows: [
        {
          name: `${table}_flow`,
          source: { type: "auto_loader", path: landing, format: "json", schema: { id: "BIGINT" } },
          sql: "SELECT id FROM source",
        },
      ],
    })),
  },
});

describe("table ownership through the API", () => {
  let cp: TestControlPlane;

  beforeAll(async () => {
    cp = await startTestControlPlane();
    await cp.land("1.json", [{ id: 1 }, { id: 2 }]);
  });
  afterAll(() => cp?.close());

  const refusal = (promise: Promise<unknown>) =>
    promise.then(
      () => undefined,
      (error: unknown) => error,
    );
  const run = async (pipelineId: string) => {
    const { update_id } = await cp.client.startUpdate(pipelineId);
    return cp.client.waitForUpdate(pipelineId, update_id, { intervalMs: 200 });
  };

  it("refuses a second pipeline declaring a table another owns, at create and at edit, naming the owner", async () => {
    const { pipeline_id: owner } = await cp.client.createPipeline(pipeline(cp.landing, "refuse", ["t"]));
    const refused = await refusal(
      cp.client.createPipeline(pipeline(cp.landing, "refuse", ["t"], "intruder")),
    );
    expect(refused).toBeInstanceOf(EbbApiError);
    expect(refused).toMatchObject({ status: 409, errorCode: "TABLE_OWNED_BY_ANOTHER_PIPELINE" });
    expect((refused as Error).message).toContain(`owned.refuse.t belongs to pipeline ${owner}`);

    const { pipeline_id: other } = await cp.client.createPipeline(pipeline(cp.landing, "refuse", ["u"]));
    const edit = await refusal(
      cp.client.editPipeline(other, { definition: pipeline(cp.landing, "refuse", ["u", "t"]).definition }),
    );
    expect(edit).toMatchObject({ status: 409, errorCode: "TABLE_OWNED_BY_ANOTHER_PIPELINE" });
    expect((await cp.client.getPipeline(other))["definition_version"]).toBe(1);
  });

  it("of 20 concurrent creates claiming one table exactly one wins", async () => {
    const results = await Promise.allSettled(
      Array.from({ length: 20 }, (_, i) =>
        cp.client.createPipeline(pipeline(cp.landing, "race", ["t"], `racer ${i}`)),
      ),
    );
    const won = results.filter((r) => r.status === "fulfilled");
    expect(won).toHaveLength(1);
    for (const lost of results.filter((r) => r.status === "rejected")) {
      expect(lost.reason).toMatchObject({ status: 409, errorCode: "TABLE_OWNED_BY_ANOTHER_PIPELINE" });
    }
    const racers = (await cp.client.listPipelines()).statuses.filter((p) =>
      String(p["name"]).startsWith("racer "),
    );
    expect(racers).toHaveLength(1);
  });

  it("lets a pipeline declare again a streaming table its own flows wrote, but not one it did not", async () => {
    const { pipeline_id: id } = await cp.client.createPipeline(pipeline(cp.landing, "again", ["a", "b"]));
    expect((await run(id)).state).toBe("COMPLETED");
    await cp.client.editPipeline(id, { definition: pipeline(cp.landing, "again", ["a"]).definition });
    await cp.client.editPipeline(id, { definition: pipeline(cp.landing, "again", ["a", "b"]).definition });
    expect((await run(id)).state).toBe("COMPLETED");
    expect((await cp.client.query("owned.again.b", { sql: "SELECT count(*) AS n FROM t" })).rows).toEqual([
      { n: 2 },
    ]);

    const { pipeline_id: other } = await cp.client.createPipeline(pipeline(cp.landing, "again", ["c"]));
    await cp.client.editPipeline(id, { definition: pipeline(cp.landing, "again", ["a"]).definition });
    const edit = await refusal(
      cp.client.editPipeline(other, { definition: pipeline(cp.landing, "again", ["c", "b"]).definition }),
    );
    expect(edit).toMatchObject({ status: 409, errorCode: "TABLE_OR_VIEW_ALREADY_EXISTS" });
  });

  it("releases the tables on delete, purges only its own, and keeps claims across a restart", async () => {
    const { pipeline_id: keeper } = await cp.client.createPipeline(pipeline(cp.landing, "purge", ["kept"]));
    const { pipeline_id: purged } = await cp.client.createPipeline(pipeline(cp.landing, "purge", ["gone"]));
    expect((await run(keeper)).state).toBe("COMPLETED");
    expect((await run(purged)).state).toBe("COMPLETED");

    // The claims are in DynamoDB: a fresh runtime over the same storage still refuses the table.
    await cp.plane.stop();
    const landing = cp.landing;
    cp = { ...(await startTestControlPlane()), landing };
    expect(
      await refusal(cp.client.createPipeline(pipeline(cp.landing, "purge", ["kept"], "after restart"))),
    ).toMatchObject({ status: 409, errorCode: "TABLE_OWNED_BY_ANOTHER_PIPELINE" });

    await cp.client.deletePipeline(purged, true);
    expect(await refusal(cp.client.history("owned.purge.gone"))).toMatchObject({ status: 404 });
    const kept = await cp.client.query("owned.purge.kept", { sql: "SELECT count(*) AS n FROM t" });
    expect(kept.rows).toEqual([{ n: 2 }]);

    // Deleted without purge: the table stays. A new pipeline declaring it would append every source
    // row again beside the kept ones: refused (dry run too) until its files are gone; the purged
    // table's name is free.
    await cp.client.deletePipeline(keeper);
    for (const dryRun of [true, false]) {
      const refused = await refusal(
        cp.client.createPipeline({ ...pipeline(cp.landing, "purge", ["kept", "gone"]), dry_run: dryRun }),
      );
      expect(refused).toMatchObject({ status: 409, errorCode: "TABLE_OR_VIEW_ALREADY_EXISTS" });
      expect((refused as Error).message).toContain(
        "table owned.purge.kept already exists and no pipeline owns it (kept when its pipeline was deleted without purge",
      );
    }
    await cp.client.createPipeline(pipeline(cp.landing, "purge", ["gone"], "reuses the purged name"));
    const keptFiles = testObjectStore(tablePrefix({ catalog: "owned", schema: "purge", table: "kept" }));
    await keptFiles.deleteMany((await listAllKeys(keptFiles, "")).map((o) => o.key));
    await cp.client.createPipeline(pipeline(cp.landing, "purge", ["kept"], "after the files went"));
  });
});
