import { randomUUID } from "node:crypto";
import { mkdir } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "../../../shared/cli/main.ts";
import { startTestControlPlane, type TestControlPlane } from "../../support/control-plane.ts";
import { ordersTable } from "../../support/orders-table.ts";

/** Branches through the `ebb` CLI against the local runtime's API (docs/branches.md, docs/cli.md). */
describe("ebb branch", () => {
  let cp: TestControlPlane;
  const ebb = async (...args: string[]) => {
    let out = "";
    let err = "";
    const code = await runCli([...args, "--endpoint", cp.plane.endpoint, "--token", cp.plane.token], {
      out: (text) => (out += text),
      err: (text) => (err += text),
      confirm: async () => true,
      width: 120,
    });
    return { code, out, err };
  };
  beforeAll(async () => {
    cp = await startTestControlPlane();
  });
  afterAll(() => cp?.close());

  it("makes a branch with rewind --branch, lists, diffs, publishes and discards it", async () => {
    const tag = randomUUID().slice(0, 8);
    await mkdir(path.join(cp.landing, tag));
    const definition = (sql: string) => ({
      name: `branch cli ${tag}`,
      catalog: "main",
      schema: `brcli_${tag}`,
      configuration: { "pipelines.rewind.enabled": "true" },
      definition: {
        datasets: [ordersTable(`${cp.landing}/${tag}/`, sql)],
      },
    });
    const { pipeline_id: id } = (await cp.client.createPipeline(
      definition("SELECT id, amount FROM source"),
    )) as {
      pipeline_id: string;
    };
    const run = async () => {
      const { update_id } = await cp.client.startUpdate(id, {});
      expect((await cp.client.waitForUpdate(id, update_id, { intervalMs: 200 })).state).toBe("COMPLETED");
    };
    await cp.land(`${tag}/1.json`, [{ id: 1, amount: 10 }]);
    await run();
    const point = (await cp.client.rewindPoints(id)).rewind_points[0]!.rewind_point_id;
    await cp.client.editPipeline(id, definition("SELECT id, amount * 2 AS amount FROM source"));
    await cp.land(`${tag}/2.json`, [{ id: 2, amount: 20 }]);
    await run();

    const made = await ebb("rewind", id, "--point", point, "--branch", "fix");
    expect(made).toMatchObject({ code: 0, err: "" });
    expect(made.out).toContain("branch fix of");
    const listed = await ebb("branch", "list", id, "--json");
    expect(JSON.parse(listed.out.trim())).toMatchObject({ name: "fix", rewind_point_id: point });
    const diff = await ebb("branch", "diff", id, "fix", "--json");
    expect(JSON.parse(diff.out)).toMatchObject({ tables: [{ only_on_live: { count: 1 } }] });
    expect((await ebb("branch", "diff", id, "fix")).out).toMatch(/only_on_live/);

    // The fix deployed, replayed on the branch: the branch has the fixed row 2.
    await cp.client.editPipeline(id, definition("SELECT id, amount FROM source"));
    const replayed = await ebb("run", id, "--branch", "fix", "--json");
    expect(replayed.code, replayed.err).toBe(0);
    expect(JSON.parse(replayed.out)).toMatchObject({ branch: "fix", state: "COMPLETED" });
    const fixed = await ebb("branch", "diff", id, "fix", "--json");
    expect(JSON.parse(fixed.out)).toMatchObject({
      tables: [{ only_on_branch: { count: 1 }, only_on_live: { count: 1 } }],
    });

    const published = await ebb("branch", "publish", id, "fix");
    expect(published.code).toBe(0);
    expect(published.out).toMatch(new RegExp(`undo: ebb rewind ${id} --point \\S+`));
    // The publish is an update, followed as ebb run follows one, to COMPLETED.
    expect(published.out).toMatch(/\S+ COMPLETED/);
    const { rows } = await cp.client.query(`main.brcli_${tag}.orders`, {
      sql: "SELECT id, amount FROM t ORDER BY id",
    });
    expect(rows.map((r) => [Number(r["id"]), Number(r["amount"])])).toEqual([
      [1, 10],
      [2, 20],
    ]);

    expect(await ebb("branch", "discard", id, "fix")).toMatchObject({ code: 0 });
    const unknown = await ebb("branch", "diff", id, "fix");
    expect(unknown.code).not.toBe(0);
    expect(unknown.err).toContain("BRANCH_NOT_FOUND");
  });
});
