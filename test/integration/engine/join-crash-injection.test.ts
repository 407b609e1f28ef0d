import { describe, expect, it } from "vitest";
import { CRASH_POINTS, crashOnce } from "../../../shared/engine/crash-points.ts";
import { InjectedCrashError } from "../../../shared/engine/errors.ts";
import { EngineHarness } from "./engine-harness.ts";

/**
 * Crash injection into a stream-stream LEFT OUTER join: the join flow reads one file of each stream
 * per batch, so its third batch pairs a new row with the state, adds to both sides' state and lets
 * an unmatched row go (written with NULLs). It is aborted after each protocol step (the state
 * written, the table not committed, …); the next update converges: each pair and each unmatched row
 * once.
 */

/** Each feed runs 3 batches before the join's first (flows run in the graph's order). */
const FEED_BATCHES = 6;

describe("crash injection into a stream-stream join", () => {
  const at = (minute: number) =>
    `2026-01-01 ${String(12 + Math.floor(minute / 60))}:${String(minute % 60).padStart(2, "0")}:00`;
  const feed = (name: string, time: string, landing: string) => ({
    type: "streaming_table",
    name,
    flows: [
      {
        name: `land_${name}`,
        source: {
          type: "auto_loader",
          path: `${landing}${name}/`,
          format: "json",
          schema: { id: "VARCHAR", ad: "VARCHAR", [time]: "TIMESTAMP" },
        },
        options: { max_files_per_batch: 1 },
        sql: "SELECT * FROM source",
      },
    ],
  });

  for (const point of CRASH_POINTS) {
    // Batch 3 reads both sides' state, pairs with it, and lets rows go: every step of a batch.
    for (const nth of [3]) {
      it(`converges after a crash ${point} of the join's batch ${nth}`, async () => {
        // A join batch that pairs nothing writes no data file: that point is the join's first file.
        const reached =
          point === "after-state-write"
            ? nth
            : point === "after-a-data-file"
              ? FEED_BATCHES + 1
              : FEED_BATCHES + nth;
        const harness = new EngineHarness({ crash: crashOnce(point, reached) });
        try {
          const pipeline = await harness.validate({
            name: "crashing join",
            catalog: "main",
            schema: "crashjoin",
            datasets: [
              feed("clicks", "click_time", harness.landingUri),
              feed("impressions", "impression_time", harness.landingUri),
              {
                type: "streaming_table",
                name: "attributed",
                flows: [
                  {
                    name: "attribute",
                    source: { type: "stream", dataset: "clicks" },
                    options: { max_files_per_batch: 1 },
                    watermark: { column: "click_time", delay: "5 minutes" },
                    join: {
                      stream: "impressions",
                      watermark: { column: "impression_time", delay: "5 minutes" },
                    },
                    sql:
                      "SELECT c.id AS click, i.id AS impression FROM source c LEFT JOIN impressions i " +
                      "ON c.ad = i.ad AND c.click_time BETWEEN i.impression_time AND i.impression_time + INTERVAL 10 MINUTES",
                  },
                ],
              },
            ],
          });
          const line = (id: string, ad: string, column: string, minute: number) =>
            JSON.stringify({ id, ad, [column]: at(minute) }) + "\n";
          const clicks: [string, string, number][] = [
            ["c1", "a", 5],
            ["c2", "z", 10],
            ["c3", "b", 50],
          ];
          const impressions: [string, string, number][] = [
            ["i1", "a", 0],
            ["i2", "b", 45],
            ["i3", "y", 90],
          ];
          for (const [n, [id, ad, minute]] of clicks.entries())
            await harness.land(`clicks/f${n}.json`, line(id, ad, "click_time", minute));
          for (const [n, [id, ad, minute]] of impressions.entries())
            await harness.land(`impressions/f${n}.json`, line(id, ad, "impression_time", minute));

          const crashed = await harness.run(pipeline);
          expect(crashed.state).toBe("FAILED");
          expect(crashed.error).toBeInstanceOf(InjectedCrashError);
          const recovered = await harness.run(pipeline);
          expect(recovered.error).toBeUndefined();
          expect(recovered.state).toBe("COMPLETED");

          const rows = (await harness.rows(pipeline, "attributed")).map((r) => ({
            click: r["click"],
            impression: r["impression"],
          }));
          // Batch 3's watermark is 12:45: c2 (12:10) can meet no impression any more; c3 waits.
          expect(rows.sort((a, b) => String(a.click).localeCompare(String(b.click)))).toEqual([
            { click: "c1", impression: "i1" },
            { click: "c2", impression: null },
            { click: "c3", impression: "i2" },
          ]);
        } finally {
          await harness.close();
        }
      });
    }
  }
});
