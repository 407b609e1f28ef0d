import { readFile } from "node:fs/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseDocument } from "yaml";
import { EXIT, runCli } from "../../../shared/cli/main.ts";
import { EbbApiError } from "../../../shared/client/ebb-client.ts";
import { startTestControlPlane, type TestControlPlane } from "../../support/control-plane.ts";
import { projectFolder } from "../../unit/project/project-files.ts";

/**
 * A pipeline project (spark-pipeline.yml and its SQL files) deployed through the production path —
 * `ebb deploy` and the API's `project` — runs as the same pipeline as its YAML twin: over the same
 * landed files, in two updates, every table equal row for row. A project with a problem creates
 * nothing and names the file, line and column.
 */

async function yamlBody(file: string, landing: string, catalog: string) {
  const text = (await readFile(file, "utf8")).replaceAll("${LANDING}", landing);
  const { datasets, ...settings } = parseDocument(text).toJS() as Record<string, unknown>;
  return { ...settings, catalog, definition: { datasets } };
}

describe("pipeline projects through the API and ebb deploy", () => {
  let cp: TestControlPlane;
  const created: string[] = [];

  const run = async (pipelineId: string) => {
    const { update_id } = await cp.client.startUpdate(pipelineId);
    const update = await cp.client.waitForUpdate(pipelineId, update_id, { intervalMs: 200 });
    expect(update.state, update.error?.message).toBe("COMPLETED");
  };
  const rows = async (table: string, order: string) =>
    (await cp.client.query(table, { sql: `SELECT * FROM t ORDER BY ${order}` })).rows;
  const cli = async (args: string[]) => {
    let out = "";
    let err = "";
    const code = await runCli([...args, "--endpoint", cp.plane.endpoint, "--token", cp.plane.token], {
      out: (text) => void (out += text),
      err: (text) => void (err += text),
    });
    return { code, out, err };
  };

  beforeAll(async () => {
    cp = await startTestControlPlane();
  });
  afterAll(async () => {
    for (const id of created) await cp?.client.deletePipeline(id, true).catch(() => undefined);
    await cp?.close();
  });

  it("ebb deploy creates the orders project's pipeline, then edits it; its tables equal the YAML example's", async () => {
    const spec = "examples/orders-project/spark-pipeline.yml";
    const deployed = await cli(["deploy", "--spec", spec, "--conf", `landing=${cp.landing}`]);
    expect(deployed, deployed.err).toMatchObject({ code: EXIT.ok });
    const projectId = /^created (\S+)\n$/.exec(deployed.out)?.[1];
    expect(projectId, deployed.out).toBeDefined();
    created.push(projectId!);
    const again = await cli(["deploy", "--spec", spec, "--conf", `landing=${cp.landing}`]);
    expect(again.out).toBe(`deployed ${projectId} definition version 2\n`);

    const { pipeline_id: yamlId } = await cp.client.createPipeline(
      await yamlBody("examples/orders/pipeline.yaml", cp.landing, "demo_yaml"),
    );
    created.push(yamlId);

    const batches = [
      [
        { id: 1, amount_cents: 1250, region: "eu" },
        { id: 2, amount_cents: 300, region: "us" },
      ],
      [
        { id: 3, amount_cents: 999, region: "eu" },
        { id: 4, amount_cents: 100, region: "apac" },
      ],
    ];
    for (const [i, batch] of batches.entries()) {
      await cp.land(`orders-${i}.json`, batch);
      await run(projectId!);
      await run(yamlId);
      for (const [table, order] of [
        ["raw_orders", "id"],
        ["orders", "id"],
        ["revenue_by_region", "region"],
      ] as const) {
        const fromProject = await rows(`demo.sales.${table}`, order);
        expect(fromProject).toEqual(await rows(`demo_yaml.sales.${table}`, order));
        expect(fromProject.length).toBeGreaterThan(0);
      }
    }
    expect(await rows("demo.sales.revenue_by_region", "region")).toEqual([
      { region: "APAC", orders: 1, revenue: 1 },
      { region: "EU", orders: 2, revenue: 22.49 },
      { region: "US", orders: 1, revenue: 3 },
    ]);
  });

  it("the AUTO CDC project through the API's project field equals the YAML walk-through (SCD 1 and 2)", async () => {
    const files = projectFolder("examples/auto-cdc-project");
    const spec = files.get("spark-pipeline.yml")!;
    files.delete("spark-pipeline.yml");
    const { pipeline_id: projectId } = await cp.client.createPipeline({
      project: { spec, files: Object.fromEntries(files) },
      configuration: { landing: `${cp.landing}/users/` },
    });
    created.push(projectId);
    const { pipeline_id: yamlId } = await cp.client.createPipeline(
      await yamlBody("examples/auto-cdc/users.yaml", `${cp.landing}/users/`, "cdc_yaml"),
    );
    created.push(yamlId);
    const { mkdir, copyFile } = await import("node:fs/promises");
    await mkdir(`${cp.landing}/users`, { recursive: true });
    for (const file of ["changes-1.ndjson", "changes-2.ndjson"]) {
      await copyFile(`examples/auto-cdc/${file}`, `${cp.landing}/users/${file}`);
      await run(projectId);
      await run(yamlId);
      expect(await rows("cdc.users.users_current", "userId")).toEqual(
        await rows("cdc_yaml.users.users_current", "userId"),
      );
      expect(await rows("cdc.users.users_history", "userId, __START_AT")).toEqual(
        await rows("cdc_yaml.users.users_history", "userId, __START_AT"),
      );
    }
    expect((await rows("cdc.users.users_history", "userId, __START_AT")).length).toBeGreaterThan(4);
  });

  it("the request's catalog and schema win over the spec's (a bundle's per-environment target)", async () => {
    const files = projectFolder("examples/auto-cdc-project");
    const spec = files.get("spark-pipeline.yml")!;
    files.delete("spark-pipeline.yml");
    const { pipeline_id } = await cp.client.createPipeline({
      project: { spec, files: Object.fromEntries(files) },
      catalog: "cdc_dev",
      schema: "users_dev",
      configuration: { landing: `${cp.landing}/users-dev/` },
    });
    created.push(pipeline_id);
    const pipeline = await cp.client.getPipeline(pipeline_id);
    expect(pipeline.spec).toMatchObject({ catalog: "cdc_dev", schema: "users_dev" });
  });

  it("several flows into one table and a temporary view (the peer suite's regional-orders project)", async () => {
    const files = projectFolder("test/sdp-peer/projects/regional-orders");
    const spec = files.get("spark-pipeline.yml")!;
    files.delete("spark-pipeline.yml");
    const landing = `${cp.landing}/regional`;
    const { pipeline_id: id } = await cp.client.createPipeline({
      project: { spec, files: Object.fromEntries(files) },
      configuration: { landing },
    });
    created.push(id);
    const { mkdir, writeFile } = await import("node:fs/promises");
    const land = async (market: string, file: string, rows: object[]) => {
      await mkdir(`${landing}/${market}`, { recursive: true });
      await writeFile(`${landing}/${market}/${file}`, rows.map((r) => JSON.stringify(r)).join("\n"));
    };
    await land("us", "1.json", [
      { id: 1, amount: 150 },
      { id: 2, amount: 20 },
    ]);
    await land("eu", "1.json", [{ id: 3, amount: 300 }]);
    await run(id);
    await land("us", "2.json", [{ id: 4, amount: 100 }]);
    await run(id);
    expect(await rows("peer.regional.all_orders", "id")).toEqual([
      { id: 1, amount: 150, market: "US" },
      { id: 2, amount: 20, market: "US" },
      { id: 3, amount: 300, market: "EU" },
      { id: 4, amount: 100, market: "US" },
    ]);
    expect(await rows("peer.regional.large_by_market", "market")).toEqual([
      { market: "EU", orders: 1, total: 300 },
      { market: "US", orders: 2, total: 250 },
    ]);
  });

  // The examples whose YAML reads an event stream or keeps windowed state, as projects: each is created
  // through the API's project field and passes a validate_only update (its SQL translated from Spark's
  // dialect, its sources and watermarks read), in a catalog of its own.
  it.each([
    ["examples/kafka-orders-project", ["orders"]],
    ["examples/kinesis-clicks-project", ["clicks"]],
    ["examples/window-metrics-project", ["page_views", "page_views_10m", "page_views_moving"]],
  ])("%s is created and validated", async (folder, tables) => {
    const files = projectFolder(folder);
    // A catalog of its own: other test files create the YAML twins' tables in the same stand-ins.
    const catalog = `example_${folder.split("/")[1]!.replaceAll("-", "_")}`;
    const spec = files.get("spark-pipeline.yml")!.replace(/^catalog: .*$/m, `catalog: ${catalog}`);
    files.delete("spark-pipeline.yml");
    const { pipeline_id: id } = await cp.client.createPipeline({
      project: { spec, files: Object.fromEntries(files) },
    });
    created.push(id);
    const { update_id } = await cp.client.startUpdate(id, { validate_only: true });
    const update = await cp.client.waitForUpdate(id, update_id, { intervalMs: 200 });
    expect(update.state, update.error?.message).toBe("COMPLETED");
    const { spec: settings } = (await cp.client.getPipeline(id)) as {
      spec: {
        catalog: string;
        configuration: Record<string, string>;
        definition: { datasets: { name: string }[] };
      };
    };
    expect(settings.catalog).toBe(catalog);
    expect(settings.configuration["pipelines.sqlDialect"]).toBe("spark");
    expect(settings.definition.datasets.map((d) => d.name).sort()).toEqual([...tables].sort());
  });

  it("a cycle across files is refused with its code, file, line and column, and nothing is created", async () => {
    // Pipelines of this name: other test files share the stand-ins' tables and create their own.
    const loops = async () =>
      (await cp.client.listPipelines()).statuses.filter((p) => p.name === "loop").length;
    const before = await loops();
    const error = await cp.client
      .createPipeline({
        project: {
          spec: "name: loop\nlibraries:\n  - glob:\n      include: '*.sql'\n",
          files: {
            "a.sql": "CREATE MATERIALIZED VIEW a AS SELECT * FROM b;",
            "b.sql": "\nCREATE MATERIALIZED VIEW b AS SELECT * FROM a;",
          },
        },
      })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(EbbApiError);
    expect(error).toMatchObject({ status: 400, errorCode: "PROJECT_DEPENDENCY_CYCLE" });
    expect((error as Error).message).toContain("a.sql:1:26: PROJECT_DEPENDENCY_CYCLE");
    expect((error as Error).message).toContain("b.sql:2:26");
    expect(await loops()).toBe(before);
  });

  it("a problem Ebb's validator finds in the built pipeline points into the project's file", async () => {
    const error = await cp.client
      .createPipeline({
        project: {
          spec: "name: bad\nlibraries:\n  - glob:\n      include: '**'\n",
          files: {
            "t/ok.sql": "CREATE MATERIALIZED VIEW ok AS SELECT 1 AS x;",
            "t/bad.sql":
              "-- a query DuckDB cannot parse\nCREATE MATERIALIZED VIEW bad AS SELECT x FROM ok WHERE;",
          },
        },
        dry_run: true,
      })
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ status: 400 });
    expect((error as Error).message).toContain("t/bad.sql:2:1 (datasets[0].sql)");
  });
});
