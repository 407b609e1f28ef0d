import { execFile } from "node:child_process";
import { copyFile, mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestControlPlane, type TestControlPlane } from "../support/control-plane.ts";
import { projectFolder } from "../unit/project/project-files.ts";

/**
 * The projects open-source SDP 4.3 cannot run as written, against a plain Spark SQL reference:
 * examples/orders-project (auto_loader JSON → cleaned streaming table with a DROP ROW expectation →
 * materialized view with a warn expectation) and examples/auto-cdc-project (AUTO CDC into SCD type 1
 * and type 2). SDP 4.3 has neither expectations nor AUTO CDC in SQL, so reference.py computes every
 * table with plain Spark SQL (the peer venv's pyspark 4.3, one Spark session for both projects and
 * both updates) over the same landed files; Ebb runs each project unchanged through the API, in two
 * updates, and after each every table equals the reference row for row.
 */

const run = promisify(execFile);
const venv = process.env["EBB_SDP_VENV"] ?? path.resolve(".ebb/sdp-venv");
type Tables = Record<string, Record<string, unknown>[]>;

const ORDER_BATCHES = [
  [
    { id: 1, amount_cents: 1250, region: "us" },
    { id: 2, amount_cents: 999, region: "eu" },
    { id: null, amount_cents: 5000, region: "us" },
  ],
  [
    { id: 3, amount_cents: 1, region: "Us" },
    { id: 4, amount_cents: 70000, region: "apac" },
  ],
];

/** Rows as sorted JSON, numbers as numbers (Spark's BIGINTs come back as strings from DuckDB). */
const canonical = (rows: readonly Record<string, unknown>[]) =>
  rows
    .map((row) =>
      JSON.stringify(
        Object.entries(row)
          .sort(([a], [b]) => a.localeCompare(b))
          .map(([k, v]) => [k, typeof v === "bigint" || /^-?\d+$/.test(String(v)) ? Number(v) : v]),
      ),
    )
    .sort();

describe("the orders and AUTO CDC projects on Ebb and a plain Spark SQL reference", () => {
  let cp: TestControlPlane;
  const created: string[] = [];

  beforeAll(async () => {
    cp = await startTestControlPlane();
  }, 120_000);
  afterAll(async () => {
    for (const id of created) await cp?.client.deletePipeline(id, true).catch(() => undefined);
    await cp?.close();
  });

  const deploy = async (folder: string, landing: string) => {
    const files = projectFolder(folder);
    const spec = files.get("spark-pipeline.yml")!;
    files.delete("spark-pipeline.yml");
    const { pipeline_id } = await cp.client.createPipeline({
      project: { spec, files: Object.fromEntries(files) },
      configuration: { landing },
    });
    created.push(pipeline_id);
    return pipeline_id;
  };
  const update = async (pipelineId: string) => {
    const { update_id } = await cp.client.startUpdate(pipelineId);
    const done = await cp.client.waitForUpdate(pipelineId, update_id, { intervalMs: 200 });
    expect(done.state, done.error?.message).toBe("COMPLETED");
  };
  const ebbTables = async (schema: string, names: readonly string[]) => {
    const tables: Tables = {};
    for (const name of names)
      tables[name] = (await cp.client.query(`${schema}.${name}`, { sql: "SELECT * FROM t" })).rows;
    return tables;
  };

  it("every table equals the reference after each of two updates", async () => {
    const orders = path.join(cp.landing, "peer-orders");
    const users = path.join(cp.landing, "peer-users");
    await mkdir(orders, { recursive: true });
    await mkdir(users, { recursive: true });
    const ordersId = await deploy("examples/orders-project", orders);
    const usersId = await deploy("examples/auto-cdc-project", users);

    // Land both updates' files in a staging folder first, so one Spark session computes every stage.
    const staged = path.join(cp.landing, "peer-staged");
    await mkdir(staged, { recursive: true });
    const orderFiles: string[] = [];
    const userFiles: string[] = [];
    const stages = { orders: [] as string[][], users: [] as string[][] };
    for (const [i, batch] of ORDER_BATCHES.entries()) {
      const file = path.join(staged, `orders-${i + 1}.json`);
      await writeFile(file, batch.map((row) => JSON.stringify(row)).join("\n"));
      orderFiles.push(file);
      stages.orders.push([...orderFiles]);
      userFiles.push(path.resolve(`examples/auto-cdc/changes-${i + 1}.ndjson`));
      stages.users.push([...userFiles]);
    }
    const { stdout } = await run(
      path.join(venv, "bin/python"),
      [path.resolve("test/sdp-peer/reference.py"), JSON.stringify(stages)],
      { maxBuffer: 64 << 20, env: { ...process.env, PATH: `${venv}/bin:${process.env["PATH"]}` } },
    );
    const reference = JSON.parse(stdout) as { orders: Tables[]; users: Tables[] };

    for (const i of [0, 1]) {
      await copyFile(orderFiles[i]!, path.join(orders, path.basename(orderFiles[i]!)));
      await copyFile(userFiles[i]!, path.join(users, path.basename(userFiles[i]!)));
      await update(ordersId);
      await update(usersId);
      for (const [schema, want] of [
        ["demo.sales", reference.orders[i]!],
        ["cdc.users", reference.users[i]!],
      ] as const) {
        const got = await ebbTables(schema, Object.keys(want));
        for (const [name, rows] of Object.entries(want))
          expect(canonical(got[name]!), `${schema}.${name} after update ${i + 1}`).toEqual(canonical(rows));
      }
    }
    // The DROP ROW expectation dropped the row without an id; the SCD 2 table kept history.
    expect(reference.orders[1]!["orders"]).toHaveLength(4);
    expect(reference.users[1]!["users_history"]!.length).toBeGreaterThan(4);
  });
});
