import { afterAll, describe, expect, it } from "vitest";
import { DeltaTable } from "../../../shared/delta/index.ts";
import { DatasetCatalog } from "../../../shared/engine/dataset-catalog.ts";
import type { ValidatedPipeline } from "../../../shared/pipeline/validate-pipeline.ts";
import { EngineHarness, jsonLines } from "./engine-harness.ts";

/**
 * The engine's side of rewind and replay (architecture.md "Rewind and replay"): after a rewind —
 * each table RESTOREd to the version its flow's checkpoint produced, each flow's HEAD moved back to
 * that checkpoint — the next update replays with the current definition, and every row is in each
 * table exactly once. The rewind itself is done here by hand with the Delta and checkpoint APIs.
 */
describe("replay after a rewind", () => {
  const harness = new EngineHarness();
  afterAll(() => harness.close());

  const definition = (cleanSql: string) => ({
    name: "rewound",
    catalog: "main",
    schema: "rewound",
    datasets: [
      {
        type: "streaming_table",
        name: "raw",
        flows: [
          {
            name: "ingest",
            source: {
              type: "auto_loader",
              path: harness.landingUri,
              format: "json",
              schema: { id: "BIGINT", amount: "BIGINT", region: "VARCHAR" },
            },
            sql: "SELECT * FROM source",
          },
        ],
      },
      {
        type: "streaming_table",
        name: "clean",
        flows: [{ name: "clean", source: { type: "stream", dataset: "raw" }, sql: cleanSql }],
      },
    ],
  });

  async function rewind(pipeline: ValidatedPipeline, to: Record<string, { seq: number; version: number }>) {
    const catalog = new DatasetCatalog(pipeline, harness.store);
    for (const [dataset, flow] of [
      ["raw", "ingest"],
      ["clean", "clean"],
    ] as const) {
      const table = await DeltaTable.open(catalog.tableStore(dataset));
      await table.restore({ to: { version: to[flow]!.version } });
      await table.close();
      const moved = await harness.plane.checkpoints.moveHead(
        { pipelineId: harness.pipelineId, flowId: flow },
        to[flow]!.seq,
      );
      expect(moved.outcome).toBe("moved");
    }
  }

  async function heads(): Promise<Record<string, { seq: number; version: number }>> {
    const out: Record<string, { seq: number; version: number }> = {};
    for (const flow of ["ingest", "clean"]) {
      const head = await harness.plane.checkpoints.head({ pipelineId: harness.pipelineId, flowId: flow });
      out[flow] = { seq: head.seq, version: head.checkpoint!.tableVersion! };
    }
    return out;
  }

  it("replays the abandoned data once, with the fixed definition", async () => {
    const original = await harness.validate(definition("SELECT id, amount FROM source"));
    await harness.land("a.json", jsonLines(1, 3));
    await harness.land("b.json", jsonLines(4, 3));
    expect((await harness.run(original)).state).toBe("COMPLETED");
    const point = await heads();

    // A bad file lands and flows through; then the pipeline is rewound to before it and fixed.
    await harness.land("c.json", jsonLines(7, 3));
    expect((await harness.run(original)).state).toBe("COMPLETED");
    await rewind(original, point);
    const fixed = await harness.validate(definition("SELECT id, amount * 2 AS amount FROM source"));
    const replay = await harness.run(fixed);
    expect(replay.error).toBeUndefined();
    expect(replay.flows["ingest"]).toMatchObject({ rowsOut: 3 });
    expect(replay.flows["clean"]).toMatchObject({ rowsIn: 3 });

    const raw = (await harness.rows(fixed, "raw", "id")).map((r) => Number(r["id"]));
    expect(raw).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9]);
    const clean = (await harness.rows(fixed, "clean", "id")).map((r) => [
      Number(r["id"]),
      Number(r["amount"]),
    ]);
    expect(clean).toEqual([
      ...[1, 2, 3, 4, 5, 6].map((id) => [id, id * 10]),
      ...[7, 8, 9].map((id) => [id, id * 20]),
    ]);

    // Rewinding again to the same point and replaying converges to the same tables.
    await rewind(fixed, point);
    expect((await harness.run(fixed)).state).toBe("COMPLETED");
    expect((await harness.rows(fixed, "clean", "id")).map((r) => Number(r["id"]))).toEqual([
      1, 2, 3, 4, 5, 6, 7, 8, 9,
    ]);
  });
});
