import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  eventMinute,
  eventStamp,
  landJsonFile,
  ModelPoints,
  statefulStep,
  type StatefulStep,
} from "../support/rewind/model-sequence.ts";
import { RewindHarness } from "../support/rewind/rewind-harness.ts";

/**
 * Operator state is rewound with the data: random arrivals of rows with repeated keys and random,
 * late and out-of-order event times, random batch splits (one batch per update, or one per file),
 * point captures, rewinds to random points (by id or by timestamp, onto abandoned timelines),
 * checkpoint resets and full refreshes, run through the real engine and the update driver on memory
 * stores, against a reference model that computes each batch over plain arrays. After every step the
 * deduplicated table equals the model: no key twice (within the watermark: no key twice while it is
 * remembered), no late row, nothing lost.
 *
 * The model keeps its own "seen" set and watermark and restores them on rewind; an engine that did not
 * restore the state with the checkpoint drops keys on replay that the model keeps, and fails.
 *
 * RUNS sets the number of runs (default 20; 40 took 2.5 min on a loaded 2-core machine).
 */

const DELAY_MINUTES = 10;

interface Row {
  readonly id: number;
  /** Minutes after the event-time base (eventStamp). */
  readonly minute: number;
}

interface ModelState {
  readonly processedFiles: readonly string[];
  readonly table: readonly Row[];
  /** Key → its event minute (within the watermark) or 0 (plain deduplication). */
  readonly seen: ReadonlyMap<number, number>;
  /** Minutes after the event-time base; undefined before any row. */
  readonly watermark: number | undefined;
}

const EMPTY: ModelState = { processedFiles: [], table: [], seen: new Map(), watermark: undefined };

type Step = StatefulStep<Row>;

const row = fc.record({ id: fc.integer({ min: 1, max: 6 }), minute: fc.integer({ min: 0, max: 90 }) });
const step = statefulStep(row, { update: 6, rewind: 3 });

interface Config {
  readonly withinWatermark: boolean;
  /** One batch per file (max_files_per_batch: 1), else one batch per update. */
  readonly perFile: boolean;
}

function definition(landingUri: string, config: Config) {
  return {
    name: "Stateful property",
    catalog: "main",
    schema: "stateprop",
    configuration: { "pipelines.rewind.enabled": "true" },
    datasets: [
      {
        name: "events",
        type: "streaming_table",
        flows: [
          {
            name: "ingest",
            source: {
              type: "auto_loader",
              path: landingUri,
              format: "json",
              schema: { id: "BIGINT", ts: "TIMESTAMP" },
            },
            sql: "SELECT id, ts FROM source",
            ...(config.perFile ? { options: { max_files_per_batch: 1 } } : {}),
            ...(config.withinWatermark
              ? {
                  watermark: { column: "ts", delay: `${DELAY_MINUTES} minutes` },
                  drop_duplicates: { keys: ["id"], within_watermark: true },
                }
              : { drop_duplicates: { keys: ["id"] } }),
          },
        ],
      },
    ],
  };
}

/**
 * One batch on the model (semantics of shared/engine/stateful/). Within the watermark a key is
 * remembered until a batch starts with a watermark at or past its event time plus the delay (Spark's
 * expiry): that batch still drops its duplicates, then lets it go.
 */
function batchModel(state: ModelState, rows: readonly Row[], config: Config): ModelState {
  const before = state.watermark;
  const kept = config.withinWatermark ? rows.filter((r) => before === undefined || r.minute >= before) : rows;
  let watermark = before;
  if (config.withinWatermark && kept.length > 0) {
    const candidate = Math.max(...kept.map((r) => r.minute)) - DELAY_MINUTES;
    watermark = watermark === undefined ? candidate : Math.max(watermark, candidate);
  }
  const expired = (minute: number) => before !== undefined && minute + DELAY_MINUTES <= before;
  const seen = new Map(state.seen);
  const firsts = new Map<number, Row>();
  for (const r of kept) if (!firsts.has(r.id)) firsts.set(r.id, r);
  const out = [...firsts.values()].filter((r) => !seen.has(r.id));
  for (const r of out) {
    if (!config.withinWatermark) seen.set(r.id, 0);
    else if (!expired(r.minute)) seen.set(r.id, r.minute);
  }
  if (config.withinWatermark) for (const [id, minute] of seen) if (expired(minute)) seen.delete(id);
  return { ...state, table: [...state.table, ...out], seen, watermark };
}

/** An update on the model: the files not processed yet, in name order, in one batch or one per file. */
function runModel(state: ModelState, files: ReadonlyMap<string, readonly Row[]>, config: Config): ModelState {
  const fresh = [...files.keys()].filter((f) => !state.processedFiles.includes(f)).sort();
  const batches = config.perFile ? fresh.map((f) => [f]) : fresh.length > 0 ? [fresh] : [];
  let next = state;
  for (const batch of batches) {
    next = batchModel(
      next,
      batch.flatMap((f) => files.get(f)!),
      config,
    );
    next = { ...next, processedFiles: [...next.processedFiles, ...batch] };
  }
  return next;
}

const byIdThenMinute = (a: Row, b: Row) => a.id - b.id || a.minute - b.minute;

async function runSequence(config: Config, steps: readonly Step[]): Promise<void> {
  const h = new RewindHarness();
  await h.deploy(definition(h.landingUri, config));
  const files = new Map<string, Row[]>();
  let model = EMPTY;
  const points = new ModelPoints<ModelState>(h);

  const check = async () => {
    const table = (await h.rows("events").catch(() => []))
      .map((r) => ({
        id: Number(r["id"]),
        minute: eventMinute(r["ts"]),
      }))
      .sort(byIdThenMinute);
    expect(table).toEqual([...model.table].sort(byIdThenMinute));
  };

  for (const s of steps) {
    switch (s.kind) {
      case "update": {
        for (const rows of s.files)
          await landJsonFile(h, files, rows, (r) => ({ id: r.id, ts: eventStamp(r.minute) }));
        const update = await h.run();
        expect(update.state).toBe("COMPLETED");
        model = runModel(model, files, config);
        if (s.capture) await points.capture(model);
        break;
      }
      case "rewind": {
        const restored = await points.rewind(s);
        if (restored === undefined) continue;
        model = restored;
        break;
      }
      case "checkpointReset":
        await h.refresh({ reset_checkpoint_selection: ["ingest"] });
        // A fresh checkpoint: empty state, every file read again, appended to what the table holds.
        model = {
          ...runModel({ ...EMPTY }, files, config),
          table: [...model.table, ...runModel(EMPTY, files, config).table],
        };
        break;
      case "fullRefresh":
        await h.refresh({ full_refresh: true });
        points.makeStale();
        model = runModel(EMPTY, files, config);
        break;
    }
    await check();
  }
}

describe("operator state against a reference model", () => {
  it("keeps the deduplicated table equal to the model through rewinds, resets and refreshes", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.record({ withinWatermark: fc.boolean(), perFile: fc.boolean() }),
        fc.array(step, { minLength: 1, maxLength: 7 }),
        (config, steps) => runSequence(config, steps),
      ),
      {
        numRuns: Number(process.env["RUNS"] ?? 20),
        examples: [
          // Rewind behind a batch that saw new keys, replay: the keys seen after the point come back.
          [
            { withinWatermark: false, perFile: false },
            [
              { kind: "update", files: [[{ id: 1, minute: 0 }]], capture: true },
              {
                kind: "update",
                files: [
                  [
                    { id: 2, minute: 5 },
                    { id: 1, minute: 6 },
                  ],
                ],
                capture: true,
              },
              { kind: "rewind", pick: 0, byTimestamp: false },
              { kind: "update", files: [], capture: false },
            ],
          ],
          // Within the watermark, mid-way: the restored watermark decides what is late on replay.
          [
            { withinWatermark: true, perFile: true },
            [
              { kind: "update", files: [[{ id: 1, minute: 30 }]], capture: true },
              { kind: "update", files: [[{ id: 2, minute: 60 }], [{ id: 3, minute: 35 }]], capture: true },
              { kind: "rewind", pick: 0, byTimestamp: true },
              { kind: "update", files: [[{ id: 1, minute: 45 }]], capture: false },
            ],
          ],
        ],
      },
    );
  }, 3_600_000);
});
