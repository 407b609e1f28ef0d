import { readFile } from "node:fs/promises";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { DuckSession } from "../../../shared/duck/duck-session.ts";
import { ScratchFolder } from "../../../shared/duck/scratch-folder.ts";
import { quoteLiteral } from "../../../shared/duck/sql-text.ts";
import { MalformedRecordsError } from "../../../shared/engine/errors.ts";
import { EngineHarness } from "./engine-harness.ts";

/** Malformed source records fail the batch with file and line, or go to `<dataset>_quarantine`; never dropped. */
describe("malformed records", () => {
  // One harness (so one pipeline id, one set of checkpoints) per pipeline.
  let harness: EngineHarness;
  beforeEach(() => {
    harness = new EngineHarness();
  });
  afterEach(() => harness.close());

  const json = [
    '{"id": 1, "amount": 10}',
    "{not json",
    "",
    '{"id": "two", "amount": 20}',
    "[1, 2]",
    '{"id": 5, "amount": 50}',
  ].join("\n");
  const csv = ["id,amount", "1,10", "2,20,extra", "x,30", "4", "5,50"].join("\n");

  const pipelineOf = (format: "json" | "csv" | "parquet", mode: "fail" | "quarantine", folder: string) =>
    harness.validate({
      name: `bad ${format} ${mode}`,
      catalog: "main",
      schema: `bad_${format}_${mode}`,
      datasets: [
        {
          type: "streaming_table",
          name: "orders",
          flows: [
            {
              name: "ingest",
              source: {
                type: "auto_loader",
                path: `${harness.landingUri}${folder}/`,
                format,
                schema: { id: "BIGINT", amount: "BIGINT" },
              },
              sql: "SELECT * FROM source",
              options: { bad_records: mode },
            },
          ],
        },
      ],
    });

  it("fails the batch by default, naming the file and line, and writes no row", async () => {
    await harness.land("fail-json/batch.json", json);
    const pipeline = await pipelineOf("json", "fail", "fail-json");
    const result = await harness.run(pipeline);
    expect(result.state).toBe("FAILED");
    const error = result.error as MalformedRecordsError;
    expect(error).toBeInstanceOf(MalformedRecordsError);
    expect(error.count).toBe(3);
    expect(error.records.map((r) => [r.file, r.line])).toEqual([
      ["batch.json", 2],
      ["batch.json", 4],
      ["batch.json", 5],
    ]);
    expect(error.message).toMatch(/batch.json line 2: not valid JSON.*bad_records: quarantine/);
    expect(error.records[1]!.error).toMatch(/column id: "two" does not fit BIGINT/);
    // The table may exist (it is created from the query's schema before the rows are read): empty.
    expect(await harness.rows(pipeline, "orders").catch(() => [])).toEqual([]);
  });

  it("fails a CSV batch on a row with the wrong column count", async () => {
    await harness.land("fail-csv/batch.csv", csv);
    const result = await harness.run(await pipelineOf("csv", "fail", "fail-csv"));
    const error = result.error as MalformedRecordsError;
    expect(error.records.map((r) => r.line)).toEqual([3, 4, 5]);
    expect(error.records[0]!.error).toMatch(/TOO MANY COLUMNS/);
    expect(error.records[2]!.error).toMatch(/MISSING COLUMNS/);
  });

  for (const format of ["json", "csv"] as const) {
    it(`quarantines bad ${format} records with their error and counts them`, async () => {
      await harness.land(`q-${format}/batch.${format}`, format === "json" ? json : csv);
      const pipeline = await pipelineOf(format, "quarantine", `q-${format}`);
      const result = await harness.run(pipeline);
      expect(result.state).toBe("COMPLETED");
      expect(result.flows["ingest"]).toMatchObject({
        rowsIn: format === "json" ? 5 : 5,
        rowsOut: 2,
        badRecords: 3,
      });
      const good = await harness.rows(pipeline, "orders", "id");
      expect(good.map((r) => Number(r["id"]))).toEqual([1, 5]);
      const quarantined = await harness.rows(pipeline, "orders_quarantine", "line");
      expect(
        quarantined.map((r) => [r["file"], Number(r["line"]), r["flow"], Number(r["batch_seq"])]),
      ).toEqual(
        (format === "json" ? [2, 4, 5] : [3, 4, 5]).map((line) => [`batch.${format}`, line, "ingest", 1]),
      );
      expect(quarantined.every((r) => typeof r["error"] === "string" && r["error"] !== "")).toBe(true);

      const events = await harness.plane.events.query(
        harness.pipelineId,
        { eventType: "flow_progress", updateId: result.updateId },
        { limit: 50 },
      );
      const batch = events.items.find((e) => e.origin.batch_id === 1);
      expect(batch?.details).toMatchObject({ flow_progress: { data_quality: { quarantined_records: 3 } } });
    });
  }

  it("a file that is not Parquet is one malformed record named by its key (never the sandbox copy); quarantine keeps the good files", async () => {
    const duck = await DuckSession.open();
    const scratch = await ScratchFolder.create();
    try {
      const file = await scratch.write(new Uint8Array(0), ".parquet");
      await duck.run(
        `COPY (SELECT 1::BIGINT AS id, 10::BIGINT AS amount) TO ${quoteLiteral(file)} (FORMAT parquet)`,
      );
      const good = new Uint8Array(await readFile(file));
      for (const mode of ["fail", "quarantine"] as const) {
        await harness.landing.put(`pq-${mode}/a-good.parquet`, good);
        await harness.land(`pq-${mode}/b-broken.parquet`, "not parquet at all");
      }
    } finally {
      duck.close();
      await scratch.dispose();
    }
    const failing = await pipelineOf("parquet", "fail", "pq-fail");
    const failed = await harness.run(failing);
    expect(failed.state).toBe("FAILED");
    const error = failed.error as MalformedRecordsError;
    expect(error).toBeInstanceOf(MalformedRecordsError);
    expect(error.message).toMatch(/b-broken\.parquet: not a readable Parquet file/);
    expect(error.message).not.toMatch(/ebb-sandbox|000000/);

    const quarantining = await pipelineOf("parquet", "quarantine", "pq-quarantine");
    expect((await harness.run(quarantining)).state).toBe("COMPLETED");
    expect((await harness.rows(quarantining, "orders")).map((r) => Number(r["id"]))).toEqual([1]);
    const quarantined = await harness.rows(quarantining, "orders_quarantine");
    expect(quarantined.map((r) => r["file"])).toEqual(["b-broken.parquet"]);
  });
});
