import { describe, expect, it } from "vitest";
import { DeltaTable, loadSnapshot } from "../../../shared/delta/index.ts";
import { RewindHarness, jsonLines } from "../../support/rewind/rewind-harness.ts";

/** A materialized view recomputes only when what it was computed from changed. */
describe("refreshing a materialized view", () => {
  const definition = (
    landingUri: string,
    sql = "SELECT region, count(*) AS n FROM cleaned GROUP BY region",
  ) => ({
    name: "view refresh",
    catalog: "main",
    schema: "views",
    datasets: [
      {
        name: "raw",
        type: "streaming_table",
        flows: [
          {
            name: "ingest",
            source: {
              type: "auto_loader",
              path: landingUri,
              format: "json",
              schema: { id: "BIGINT", amount: "BIGINT", region: "VARCHAR" },
            },
            sql: "SELECT * FROM source",
          },
        ],
      },
      {
        name: "cleaned",
        type: "streaming_table",
        flows: [{ name: "clean", source: { type: "stream", dataset: "raw" }, sql: "SELECT * FROM source" }],
      },
      { name: "totals", type: "materialized_view", sql },
    ],
  });
  const counts = async (h: RewindHarness) =>
    (await h.rows("totals", "region")).map((r) => [r["region"], Number(r["n"])]);
  const restore = async (h: RewindHarness, dataset: string, version: number) => {
    const table = await DeltaTable.open(h.tableStore(dataset), { clock: h.clock.now });
    try {
      await table.restore({ to: { version } });
    } finally {
      await table.close();
    }
  };

  it("skips when its inputs are at the versions it was computed from, and recomputes after any restore", async () => {
    const h = new RewindHarness();
    await h.deploy(definition(h.landingUri));
    await h.land("a.json", jsonLines(0, 3));
    const first = await h.run();
    expect(first.views["totals"]).toMatchObject({ recomputed: true, rows: 3 });
    const cleanedAtFirst = (await loadSnapshot(h.tableStore("cleaned"))).version;
    const totalsAtFirst = first.views["totals"]!.tableVersion;

    // Nothing new: no commit, the same contents.
    const idle = await h.run();
    expect(idle.views["totals"]).toMatchObject({ recomputed: false, rows: 3, tableVersion: totalsAtFirst });

    await h.land("b.json", jsonLines(3, 3));
    const second = await h.run();
    expect(second.views["totals"]).toMatchObject({ recomputed: true, tableVersion: totalsAtFirst + 1 });
    expect(await counts(h)).toEqual([
      ["apac", 2],
      ["eu", 2],
      ["us", 2],
    ]);

    // An input restored (a new version with old contents): recomputed from it.
    await restore(h, "cleaned", cleanedAtFirst);
    const afterInputRestore = await h.run();
    expect(afterInputRestore.views["totals"]).toMatchObject({ recomputed: true });
    expect(await counts(h)).toEqual([
      ["apac", 1],
      ["eu", 1],
      ["us", 1],
    ]);
    expect((await h.run()).views["totals"]).toMatchObject({ recomputed: false });

    // The view's own table restored: its inputs are unchanged, yet it recomputes.
    await restore(h, "totals", totalsAtFirst + 1);
    expect(await counts(h)).toEqual([
      ["apac", 2],
      ["eu", 2],
      ["us", 2],
    ]);
    expect((await h.run()).views["totals"]).toMatchObject({ recomputed: true });
    expect(await counts(h)).toEqual([
      ["apac", 1],
      ["eu", 1],
      ["us", 1],
    ]);

    // A changed definition recomputes, though no input moved.
    await h.deploy(
      definition(h.landingUri, "SELECT region, count(*) + 10 AS n FROM cleaned GROUP BY region"),
    );
    expect((await h.run()).views["totals"]).toMatchObject({ recomputed: true });
    expect(await counts(h)).toEqual([
      ["apac", 11],
      ["eu", 11],
      ["us", 11],
    ]);
  });
});
