import { describe, expect, it } from "vitest";
import { CRASH_POINTS, crashOnce } from "../../../shared/engine/crash-points.ts";
import { InjectedCrashError } from "../../../shared/engine/errors.ts";
import { EngineHarness, jsonLines } from "./engine-harness.ts";

/**
 * Crash injection: a batch aborted after each protocol step, at several batches of a
 * two-level pipeline whose flows deduplicate by key (operator state); the next update converges and
 * every input row is in each table exactly once, a redelivered one included.
 */
describe("crash injection", () => {
  // Batches 1-5 are the ingest flow's (one file each); 6 and later the clean flow's: the first, the last
  // of the first flow, and one of the second.
  const batches = [1, 5, 7];

  for (const point of CRASH_POINTS) {
    for (const nth of batches) {
      it(`converges after a crash ${point} of batch ${nth}`, async () => {
        const harness = new EngineHarness({ crash: crashOnce(point, nth) });
        try {
          const pipeline = await harness.validate({
            name: "crashing",
            catalog: "main",
            schema: "crash",
            datasets: [
              {
                type: "streaming_table",
                name: "raw",
                flows: [
                  {
                    name: "ingest",
                    source: { type: "auto_loader", path: harness.landingUri, format: "json" },
                    sql: "SELECT * FROM source",
                    options: { max_files_per_batch: 1 },
                    drop_duplicates: { keys: ["id"] },
                  },
                ],
              },
              {
                type: "streaming_table",
                name: "clean",
                flows: [
                  {
                    name: "clean",
                    source: { type: "stream", dataset: "raw" },
                    sql: "SELECT id, amount FROM source",
                    options: { max_rows_per_batch: 5 },
                    drop_duplicates: { keys: ["id"] },
                  },
                ],
              },
            ],
          });
          for (let file = 0; file < 4; file++)
            await harness.land(`f${file}.json`, jsonLines(file * 3 + 1, 3));
          // At-least-once delivery: ids 2-4 again.
          await harness.land(`f4.json`, jsonLines(2, 3));

          const crashed = await harness.run(pipeline);
          expect(crashed.state).toBe("FAILED");
          expect(crashed.error).toBeInstanceOf(InjectedCrashError);
          const recovered = await harness.run(pipeline);
          expect(recovered.error).toBeUndefined();
          expect(recovered.state).toBe("COMPLETED");

          const everyId = Array.from({ length: 12 }, (_, i) => i + 1);
          for (const table of ["raw", "clean"]) {
            const ids = (await harness.rows(pipeline, table))
              .map((r) => Number(r["id"]))
              .sort((a, b) => a - b);
            expect(ids, table).toEqual(everyId);
          }
        } finally {
          await harness.close();
        }
      });
    }
  }
});
