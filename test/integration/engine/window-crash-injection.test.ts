import { describe, expect, it } from "vitest";
import { CRASH_POINTS, crashOnce } from "../../../shared/engine/crash-points.ts";
import { InjectedCrashError } from "../../../shared/engine/errors.ts";
import { EngineHarness } from "./engine-harness.ts";

/**
 * Crash injection into a windowed aggregation: a batch that adds to an open window, and one that
 * completes windows, aborted after each protocol step (the state written, the table not committed,
 * …); the next update converges: each window once, with every row counted once.
 */
describe("crash injection into a windowed aggregation", () => {
  const line = (minute: number, v: number) =>
    JSON.stringify({ k: "a", v, ts: `2026-01-01 12:${String(minute).padStart(2, "0")}:00` }) + "\n";

  for (const point of CRASH_POINTS) {
    // Only a batch that emits windows writes a data file: here, one (the first file written).
    for (const nth of point === "after-a-data-file" ? [1] : [2, 3]) {
      it(`converges after a crash ${point} of batch ${nth}`, async () => {
        const harness = new EngineHarness({ crash: crashOnce(point, nth) });
        try {
          const pipeline = await harness.validate({
            name: "crashing windows",
            catalog: "main",
            schema: "crashwin",
            datasets: [
              {
                type: "streaming_table",
                name: "per_window",
                flows: [
                  {
                    name: "per_window",
                    source: {
                      type: "auto_loader",
                      path: harness.landingUri,
                      format: "json",
                      schema: { k: "VARCHAR", v: "BIGINT", ts: "TIMESTAMP" },
                    },
                    options: { max_files_per_batch: 1 },
                    watermark: { column: "ts", delay: "5 minutes" },
                    sql: "SELECT window.start AS start, k, count(*) AS n, sum(v) AS total FROM source GROUP BY window(ts, '10 minutes'), k",
                  },
                ],
              },
            ],
          });
          await harness.land("f0.json", line(1, 1) + line(2, 2));
          await harness.land("f1.json", line(12, 4) + line(3, 8));
          await harness.land("f2.json", line(30, 16));

          const crashed = await harness.run(pipeline);
          expect(crashed.state).toBe("FAILED");
          expect(crashed.error).toBeInstanceOf(InjectedCrashError);
          const recovered = await harness.run(pipeline);
          expect(recovered.error).toBeUndefined();
          expect(recovered.state).toBe("COMPLETED");

          const rows = (await harness.rows(pipeline, "per_window"))
            .map((r) => ({ n: Number(r["n"]), total: Number(r["total"]) }))
            .sort((a, b) => a.total - b.total);
          // [12:00, 12:10): 1 + 2 + 8; [12:10, 12:20): 4. The 12:30 window is still open.
          expect(rows).toEqual([
            { n: 1, total: 4 },
            { n: 3, total: 11 },
          ]);
        } finally {
          await harness.close();
        }
      });
    }
  }
});
