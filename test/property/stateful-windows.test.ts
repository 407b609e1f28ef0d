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
 * Windowed aggregation is rewound with the data: random arrivals with late and out-of-order event
 * times, random batch splits (one batch per update, or one per file), tumbling or sliding windows,
 * point captures, rewinds to random points (by id or by timestamp, onto abandoned timelines),
 * checkpoint resets and full refreshes, run through the real engine and the update driver on memory
 * stores, against a reference model that keeps its partial aggregates in plain maps. After every step
 * the table of emitted windows equals the model's: each window once, with its figures; no late row
 * counted; no window lost.
 *
 * The model restores its open windows and watermark on rewind; an engine that did not restore the
 * state with the checkpoint would count the abandoned timeline's rows again on replay, and fail.
 *
 * RUNS sets the number of runs (default 15).
 */

const DELAY_MINUTES = 5;

interface Row {
  readonly k: number;
  readonly v: number;
  /** Minutes after the event-time base (eventStamp). */
  readonly minute: number;
}

interface Figures {
  readonly n: number;
  readonly total: number;
  readonly lo: number;
  readonly hi: number;
  /** count(DISTINCT v) and sum(DISTINCT v): the state keeps the window's set of values. */
  readonly distinctN: number;
  readonly distinctTotal: number;
}

/** One emitted window: its start (minutes after the event-time base), key and figures. */
interface WindowRow extends Figures {
  readonly start: number;
  readonly k: number;
}

interface ModelState {
  readonly processedFiles: readonly string[];
  readonly table: readonly WindowRow[];
  /** `${start}|${k}` → the partial figures of an open window. */
  readonly open: ReadonlyMap<string, WindowRow & { readonly values: ReadonlySet<number> }>;
  readonly watermark: number | undefined;
}

const EMPTY: ModelState = { processedFiles: [], table: [], open: new Map(), watermark: undefined };

type Step = StatefulStep<Row>;

const row = fc.record({
  k: fc.integer({ min: 1, max: 2 }),
  v: fc.integer({ min: 1, max: 9 }),
  minute: fc.integer({ min: 0, max: 60 }),
});
const step = statefulStep(row, { update: 6, rewind: 3 });

interface Config {
  /** Window size and slide in minutes (equal: tumbling). */
  readonly size: number;
  readonly slide: number;
  readonly perFile: boolean;
}

function definition(landingUri: string, config: Config) {
  const window =
    config.size === config.slide
      ? `window(ts, '${config.size} minutes')`
      : `window(ts, '${config.size} minutes', '${config.slide} minutes')`;
  return {
    name: "Window property",
    catalog: "main",
    schema: "windowprop",
    configuration: { "pipelines.rewind.enabled": "true" },
    datasets: [
      {
        name: "metrics",
        type: "streaming_table",
        flows: [
          {
            name: "per_window",
            source: {
              type: "auto_loader",
              path: landingUri,
              format: "json",
              schema: { k: "BIGINT", v: "BIGINT", ts: "TIMESTAMP" },
            },
            watermark: { column: "ts", delay: `${DELAY_MINUTES} minutes` },
            sql:
              "SELECT window.start AS start, k, count(*) AS n, sum(v) AS total, min(v) AS lo, max(v) AS hi, " +
              "count(DISTINCT v) AS distinct_n, sum(DISTINCT v) AS distinct_total " +
              `FROM source GROUP BY ${window}, k`,
            ...(config.perFile ? { options: { max_files_per_batch: 1 } } : {}),
          },
        ],
      },
    ],
  };
}

/** One batch on the model (semantics of shared/engine/stateful/window-aggregation.ts). */
function batchModel(state: ModelState, rows: readonly Row[], config: Config): ModelState {
  const previous = state.watermark;
  const kept = rows.filter((r) => previous === undefined || r.minute >= previous);
  let watermark = previous;
  if (kept.length > 0) {
    const candidate = Math.max(...kept.map((r) => r.minute)) - DELAY_MINUTES;
    watermark = watermark === undefined ? candidate : Math.max(watermark, candidate);
  }
  const open = new Map(state.open);
  for (const r of kept) {
    const last = r.minute - (r.minute % config.slide);
    for (let start = last; start > r.minute - config.size; start -= config.slide) {
      const key = `${start}|${r.k}`;
      const was = open.get(key);
      const values = new Set([...(was?.values ?? []), r.v]);
      open.set(key, {
        start,
        k: r.k,
        n: (was?.n ?? 0) + 1,
        total: (was?.total ?? 0) + r.v,
        lo: Math.min(was?.lo ?? Infinity, r.v),
        hi: Math.max(was?.hi ?? -Infinity, r.v),
        values,
        distinctN: values.size,
        distinctTotal: [...values].reduce((a, b) => a + b, 0),
      });
    }
  }
  const emitted: WindowRow[] = [];
  for (const [key, { values: _, ...window }] of open) {
    if (watermark !== undefined && window.start + config.size <= watermark) {
      emitted.push(window);
      open.delete(key);
    }
  }
  return { ...state, table: [...state.table, ...emitted], open, watermark };
}

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

const ordered = (rows: readonly WindowRow[]) =>
  [...rows].sort((a, b) => a.start - b.start || a.k - b.k || a.n - b.n || a.total - b.total);

async function runSequence(config: Config, steps: readonly Step[]): Promise<void> {
  const h = new RewindHarness();
  await h.deploy(definition(h.landingUri, config));
  const files = new Map<string, Row[]>();
  let model = EMPTY;
  const points = new ModelPoints<ModelState>(h);

  const check = async () => {
    const table = (await h.rows("metrics", "k").catch(() => [])).map((r) => ({
      start: eventMinute(r["start"]),
      k: Number(r["k"]),
      n: Number(r["n"]),
      total: Number(r["total"]),
      lo: Number(r["lo"]),
      hi: Number(r["hi"]),
      distinctN: Number(r["distinct_n"]),
      distinctTotal: Number(r["distinct_total"]),
    }));
    expect(ordered(table)).toEqual(ordered(model.table));
  };

  for (const s of steps) {
    switch (s.kind) {
      case "update": {
        for (const rows of s.files)
          await landJsonFile(h, files, rows, (r) => ({ k: r.k, v: r.v, ts: eventStamp(r.minute) }));
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
        await h.refresh({ reset_checkpoint_selection: ["per_window"] });
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
  // Each window once per timeline: without resets, no (start, key) twice.
  if (!steps.some((s) => s.kind === "checkpointReset")) {
    const keys = model.table.map((w) => `${w.start}|${w.k}`);
    expect(new Set(keys).size).toBe(keys.length);
  }
}

describe("windowed aggregation against a reference model", () => {
  it("keeps the table of emitted windows equal to the model through rewinds, resets and refreshes", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.record({
          window: fc.constantFrom({ size: 10, slide: 10 }, { size: 10, slide: 5 }, { size: 15, slide: 10 }),
          perFile: fc.boolean(),
        }),
        fc.array(step, { minLength: 1, maxLength: 6 }),
        ({ window, perFile }, steps) => runSequence({ ...window, perFile }, steps),
      ),
      {
        numRuns: Number(process.env["RUNS"] ?? 15),
        examples: [
          // Rewind mid-window: the restored partials of the open window are added to on replay, once.
          [
            { window: { size: 10, slide: 10 }, perFile: true },
            [
              { kind: "update", files: [[{ k: 1, v: 1, minute: 1 }]], capture: true },
              {
                kind: "update",
                files: [[{ k: 1, v: 2, minute: 4 }], [{ k: 1, v: 3, minute: 30 }]],
                capture: true,
              },
              { kind: "rewind", pick: 0, byTimestamp: false },
              { kind: "update", files: [[{ k: 1, v: 4, minute: 6 }]], capture: false },
            ],
          ],
        ],
      },
    );
  }, 3_600_000);
});
