import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  eventStamp,
  landJsonFile,
  ModelPoints,
  statefulStep,
  type StatefulStep,
} from "../support/rewind/model-sequence.ts";
import { RewindHarness } from "../support/rewind/rewind-harness.ts";

/**
 * A stream-stream join is rewound with the data: random clicks and impressions with late and
 * out-of-order event times, landing in random groups (each update is one join batch of what landed
 * since the last), INNER or LEFT OUTER, point captures and rewinds to random points (by id or by
 * timestamp, onto abandoned timelines), run through the real engine and the update driver on memory
 * stores. The reference model is a batch join over all the data with the watermark rule only: a row
 * counts unless it was older than the join's watermark (the lower of both streams' newest event time
 * minus their delays) before its batch; the table is every matching pair of counted rows, and, for
 * LEFT OUTER, every counted click that matches none and that the watermark has passed its range.
 * The model knows nothing of the state the engine keeps: an engine that let go of a row too early
 * would lose a pair, and one that kept none across batches would lose them all.
 *
 * The model restores the counted rows and watermarks on rewind; an engine that did not restore the
 * join's state with the checkpoint would pair the replayed rows against the abandoned timeline's
 * rows (or miss the point's own), and fail.
 *
 * Checkpoint resets of the join flow (a fresh, empty state over everything the feeds hold, appended
 * to the table) and full refreshes (everything anew; earlier points no longer rewound to) are steps
 * too.
 *
 * RUNS sets the number of runs (default 30).
 */

const CLICK_DELAY = 5;
const IMPRESSION_DELAY = 10;
/** `click - impression` must lie in [LO, HI] minutes. */
const LO = -5;
const HI = 10;

interface Event {
  readonly side: "c" | "i";
  readonly id: number;
  readonly ad: number;
  /** Minutes after the event-time base (eventStamp). */
  readonly minute: number;
}

interface ModelState {
  readonly processedFiles: readonly string[];
  /** Rows the table holds from before the join's last checkpoint reset (kept by a reset). */
  readonly kept: readonly Joined[];
  readonly clicks: readonly Event[];
  readonly impressions: readonly Event[];
  readonly clickMark: number | undefined;
  readonly impressionMark: number | undefined;
}

const EMPTY: ModelState = {
  processedFiles: [],
  kept: [],
  clicks: [],
  impressions: [],
  clickMark: undefined,
  impressionMark: undefined,
};

type Step = StatefulStep<Omit<Event, "id">>;

const event = fc.record({
  side: fc.constantFrom("c" as const, "i" as const),
  ad: fc.integer({ min: 1, max: 2 }),
  minute: fc.integer({ min: 0, max: 60 }),
});
const step = statefulStep(event, { update: 3, rewind: 2 });

function definition(landingUri: string, outer: boolean) {
  // Both feeds read every file and keep their own side's rows.
  const feed = (name: string, side: "c" | "i", time: string) => ({
    name,
    type: "streaming_table",
    flows: [
      {
        name: `land_${name}`,
        source: {
          type: "auto_loader",
          path: landingUri,
          format: "json",
          schema: { side: "VARCHAR", id: "BIGINT", ad: "BIGINT", ts: "TIMESTAMP" },
        },
        sql: `SELECT id, ad, ts AS ${time} FROM source WHERE side = '${side}'`,
      },
    ],
  });
  return {
    name: "Join property",
    catalog: "main",
    schema: "joinprop",
    configuration: { "pipelines.rewind.enabled": "true" },
    datasets: [
      feed("clicks", "c", "click_time"),
      feed("impressions", "i", "impression_time"),
      {
        name: "attributed",
        type: "streaming_table",
        flows: [
          {
            name: "attribute",
            source: { type: "stream", dataset: "clicks" },
            watermark: { column: "click_time", delay: `${CLICK_DELAY} minutes` },
            join: {
              stream: "impressions",
              watermark: { column: "impression_time", delay: `${IMPRESSION_DELAY} minutes` },
            },
            sql:
              `SELECT c.id AS click, i.id AS impression FROM source c ${outer ? "LEFT" : ""} JOIN impressions i ` +
              `ON c.ad = i.ad AND c.click_time BETWEEN i.impression_time - INTERVAL ${-LO} MINUTES AND i.impression_time + INTERVAL ${HI} MINUTES`,
          },
        ],
      },
    ],
  };
}

const joinMark = (state: ModelState) =>
  state.clickMark === undefined || state.impressionMark === undefined
    ? undefined
    : Math.min(state.clickMark, state.impressionMark);
const advance = (mark: number | undefined, rows: readonly Event[], delay: number) =>
  rows.length === 0 ? mark : Math.max(mark ?? -Infinity, Math.max(...rows.map((r) => r.minute)) - delay);

/** One batch: only the watermark rule (which rows count), no state. */
function batchModel(state: ModelState, rows: readonly Event[]): ModelState {
  const before = joinMark(state);
  const counted = rows.filter((r) => before === undefined || r.minute >= before);
  const clicks = counted.filter((r) => r.side === "c");
  const impressions = counted.filter((r) => r.side === "i");
  return {
    ...state,
    clicks: [...state.clicks, ...clicks],
    impressions: [...state.impressions, ...impressions],
    clickMark: advance(state.clickMark, clicks, CLICK_DELAY),
    impressionMark: advance(state.impressionMark, impressions, IMPRESSION_DELAY),
  };
}

/** The batch join over every counted row, after the rows a reset kept. */
type Joined = { readonly click: number; readonly impression: number | null };

function tableOf(state: ModelState, outer: boolean): Joined[] {
  return [...state.kept, ...joinOf(state, outer)];
}

function joinOf(state: ModelState, outer: boolean): Joined[] {
  const matches = (c: Event, i: Event) =>
    c.ad === i.ad && c.minute - i.minute >= LO && c.minute - i.minute <= HI;
  const mark = joinMark(state);
  return state.clicks.flatMap((c): Joined[] => {
    const pairs = state.impressions
      .filter((i) => matches(c, i))
      .map((i) => ({ click: c.id, impression: i.id }));
    if (pairs.length > 0 || !outer) return pairs;
    return mark !== undefined && c.minute - LO < mark ? [{ click: c.id, impression: null }] : [];
  });
}

const ordered = (rows: readonly { click: number; impression: number | null }[]) =>
  [...rows].sort((a, b) => a.click - b.click || (a.impression ?? -1) - (b.impression ?? -1));

async function runSequence(outer: boolean, steps: readonly Step[]): Promise<void> {
  const h = new RewindHarness();
  await h.deploy(definition(h.landingUri, outer));
  const files = new Map<string, Event[]>();
  let nextId = 1;
  let model = EMPTY;
  const points = new ModelPoints<ModelState>(h);
  /** The events of the files the feeds have read, in the order they read them. */
  const read = (state: ModelState) => state.processedFiles.flatMap((f) => files.get(f)!);

  for (const s of steps) {
    if (s.kind === "update") {
      for (const rows of s.files) {
        const events = rows.map((r) => ({ ...r, id: nextId++ }));
        await landJsonFile(h, files, events, (r) => ({
          side: r.side,
          id: r.id,
          ad: r.ad,
          ts: eventStamp(r.minute),
        }));
      }
      const update = await h.run();
      expect(update.state).toBe("COMPLETED");
      const fresh = [...files.keys()].filter((f) => !model.processedFiles.includes(f)).sort();
      if (fresh.length > 0)
        model = {
          ...batchModel(
            model,
            fresh.flatMap((f) => files.get(f)!),
          ),
          processedFiles: [...model.processedFiles, ...fresh],
        };
      if (s.capture) await points.capture(model);
    } else if (s.kind === "checkpointReset") {
      await h.refresh({ reset_checkpoint_selection: ["attribute"] });
      // The feeds read what landed since (after a rewind); then the join, from a fresh checkpoint and
      // an empty state, reads every row they hold in one batch, appended to what the table holds.
      const processed = [
        ...model.processedFiles,
        ...[...files.keys()].filter((f) => !model.processedFiles.includes(f)).sort(),
      ];
      model = {
        ...batchModel({ ...EMPTY, processedFiles: processed }, read({ ...model, processedFiles: processed })),
        kept: tableOf(model, outer),
      };
    } else if (s.kind === "fullRefresh") {
      await h.refresh({ full_refresh: true });
      // Every dataset anew: the feeds read every file landed, the join one batch of all of them.
      points.makeStale();
      const all = [...files.keys()].sort();
      model = batchModel(
        { ...EMPTY, processedFiles: all },
        all.flatMap((f) => files.get(f)!),
      );
    } else {
      const restored = await points.rewind(s);
      if (restored === undefined) continue;
      model = restored;
    }
    const table = (await h.rows("attributed", "click")).map((r) => ({
      click: Number(r["click"]),
      impression: r["impression"] === null ? null : Number(r["impression"]),
    }));
    expect(ordered(table)).toEqual(ordered(tableOf(model, outer)));
  }
}

describe("stream-stream joins against a reference model", () => {
  it("keeps the joined table equal to a batch join of the counted rows through late rows and rewinds", async () => {
    await fc.assert(
      fc.asyncProperty(fc.boolean(), fc.array(step, { minLength: 1, maxLength: 6 }), (outer, steps) =>
        runSequence(outer, steps),
      ),
      {
        numRuns: Number(process.env["RUNS"] ?? 30),
        examples: [
          // A checkpoint reset after a pair: the fresh state pairs every row again (appended), and a
          // later click pairs with the impression once more, from the new state only.
          [
            false,
            [
              { kind: "update", files: [[{ side: "i", ad: 1, minute: 10 }]], capture: true },
              { kind: "update", files: [[{ side: "c", ad: 1, minute: 12 }]], capture: true },
              { kind: "checkpointReset" },
              { kind: "update", files: [[{ side: "c", ad: 1, minute: 14 }]], capture: false },
              { kind: "rewind", pick: 1, byTimestamp: false },
              { kind: "update", files: [[{ side: "c", ad: 1, minute: 15 }]], capture: false },
            ],
          ],
          // A full refresh after a rewind: everything landed is joined anew, once.
          [
            true,
            [
              { kind: "update", files: [[{ side: "i", ad: 1, minute: 10 }]], capture: true },
              { kind: "update", files: [[{ side: "c", ad: 1, minute: 12 }]], capture: false },
              { kind: "rewind", pick: 0, byTimestamp: true },
              { kind: "fullRefresh" },
              { kind: "update", files: [[{ side: "c", ad: 2, minute: 50 }]], capture: false },
            ],
          ],
          // A rewind after a click paired: the replay reads the click again, and an impression that
          // arrives after the rewind pairs with it once. A state not restored still holds the
          // abandoned timeline's click, which would pair a second time.
          [
            true,
            [
              { kind: "update", files: [[{ side: "i", ad: 1, minute: 10 }]], capture: true },
              {
                kind: "update",
                files: [
                  [
                    { side: "c", ad: 1, minute: 12 },
                    { side: "c", ad: 2, minute: 40 },
                  ],
                ],
                capture: false,
              },
              { kind: "rewind", pick: 0, byTimestamp: false },
              { kind: "update", files: [[{ side: "i", ad: 1, minute: 14 }]], capture: false },
            ],
          ],
        ],
      },
    );
  }, 3_600_000);
});
