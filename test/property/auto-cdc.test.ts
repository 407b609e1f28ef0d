import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { captureRewindPoint } from "../../shared/rewind/rewind-points.ts";
import { landJsonFile } from "../support/rewind/model-sequence.ts";
import { RewindHarness } from "../support/rewind/rewind-harness.ts";
import { scd1Model, scd2Model, type CdcEvent, type ModelOptions } from "../support/cdc/cdc-model.ts";
import { cdcEvents } from "../support/cdc/cdc-events.ts";

/**
 * AUTO CDC against a reference model (test/support/cdc/cdc-model.ts): random per-key event streams
 * (upserts, deletes, truncates, exact duplicates, out-of-order and late events, equal sequence values)
 * land as files; updates apply them in random batch splits (one to three files a batch) to an SCD
 * type 1 and an SCD type 2 target through the production steps; rewinds go to random points and
 * replay, checkpoint resets re-read the source from the start. Each target has two AUTO CDC flows
 * (A and B, each taking the events sent to it), which updates run together or one alone, so their
 * batches interleave in any order; a reset may reset one of them. After every step each target
 * equals the model's fold of the events its flows have consumed on the live timeline — no refresh
 * needed.
 *
 * RUNS sets the number of runs (default 60).
 */

type Source = "A" | "B";
const SOURCES = ["A", "B"] as const;
type SentEvent = CdcEvent & { readonly src: Source };

const cdcEvent: fc.Arbitrary<CdcEvent> = cdcEvents({
  keys: 4,
  sequences: 12,
  truncateSequences: 8,
  nullFreq: 4,
});

const event: fc.Arbitrary<SentEvent> = fc
  .tuple(cdcEvent, fc.constantFrom(...SOURCES))
  .map(([e, src]) => ({ ...e, src }));

type Step =
  /** A file of events lands; `repeat` re-sends earlier events too (exact duplicates). */
  | { readonly kind: "arrive"; readonly events: readonly SentEvent[]; readonly repeat: number }
  /** An update of both flows of each target, or of one (`only`). */
  | { readonly kind: "update"; readonly capture: boolean; readonly only?: Source }
  | { readonly kind: "rewind"; readonly pick: number }
  /** A new definition: the flows' SQL drops the events whose `a` is `drop` (none when null). */
  | { readonly kind: "deploy"; readonly drop: number | null }
  /**
   * A new column list: `b` written or not (in except_column_list). The flows' state no longer fits,
   * so the change comes with what semantics.md asks: a dropped column a full refresh (the table
   * loses it), an added one a checkpoint reset of every flow (the re-read writes it).
   */
  | { readonly kind: "columns"; readonly writesB: boolean }
  /** A checkpoint reset of one flow of each target, or of both. */
  | { readonly kind: "reset"; readonly only?: Source };

const step: fc.Arbitrary<Step> = fc.oneof(
  {
    weight: 5,
    arbitrary: fc.record({
      kind: fc.constant("arrive" as const),
      events: fc.array(event, { minLength: 1, maxLength: 6 }),
      repeat: fc.nat({ max: 2 }),
    }),
  },
  {
    weight: 4,
    arbitrary: fc.record(
      {
        kind: fc.constant("update" as const),
        capture: fc.boolean(),
        only: fc.constantFrom(...SOURCES),
      },
      { requiredKeys: ["kind", "capture"] },
    ),
  },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant("rewind" as const), pick: fc.nat() }) },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant("deploy" as const),
      drop: fc.option(fc.integer({ min: 0, max: 2 }), { freq: 2 }),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record(
      { kind: fc.constant("reset" as const), only: fc.constantFrom(...SOURCES) },
      { requiredKeys: ["kind"] },
    ),
  },
  {
    weight: 1,
    arbitrary: fc.record({ kind: fc.constant("columns" as const), writesB: fc.boolean() }),
  },
);

/** The history columns of SCD type 2 that the target holds (never none). */
const trackedOf = (options: ModelOptions) => {
  const held = options.tracked.filter((c) => c !== "b" || options.writesB !== false);
  return held.length > 0 ? held : (["a"] as const);
};

const SCHEMA = { k: "BIGINT", seq: "BIGINT", op: "VARCHAR", a: "BIGINT", b: "VARCHAR", src: "VARCHAR" };

const flowName = (target: "scd1" | "scd2", src: Source) => `${target}_${src.toLowerCase()}`;

function definition(landingUri: string, options: ModelOptions, filesPerBatch: number, drop: number | null) {
  const kept = drop === null ? "true" : `a IS DISTINCT FROM ${drop}`;
  const cdc = {
    keys: ["k"],
    sequence_by: "seq",
    apply_as_deletes: "op = 'D'",
    except_column_list: ["op", "seq", "src", ...(options.writesB === false ? ["b"] : [])],
    ignore_null_updates: options.ignoreNullUpdates,
  };
  const source = { type: "auto_loader", path: landingUri, format: "json", schema: SCHEMA };
  const flowOptions = { max_files_per_batch: filesPerBatch };
  return {
    name: "cdc-property",
    catalog: "main",
    schema: "cdc",
    configuration: { "pipelines.rewind.enabled": "true" },
    datasets: [
      {
        name: "scd1",
        type: "streaming_table",
        flows: SOURCES.map((src) => ({
          name: flowName("scd1", src),
          source,
          sql: `SELECT * FROM source WHERE src = '${src}' AND ${kept}`,
          options: flowOptions,
          auto_cdc: { ...cdc, apply_as_truncates: "op = 'T'" },
        })),
      },
      {
        name: "scd2",
        type: "streaming_table",
        flows: SOURCES.map((src) => ({
          name: flowName("scd2", src),
          source,
          sql: `SELECT * FROM source WHERE src = '${src}' AND op <> 'T' AND ${kept}`,
          options: flowOptions,
          auto_cdc: { ...cdc, stored_as_scd_type: 2, track_history_column_list: trackedOf(options) },
        })),
      },
    ],
  };
}

/** A file a flow consumed, with the events its definition at the time dropped. */
interface Consumed {
  readonly file: string;
  readonly drop: number | null;
}

/** What each flow (A's pair, B's pair) has consumed. */
type ConsumedBy = Readonly<Record<Source, readonly Consumed[]>>;

interface Point {
  readonly id: string;
  readonly consumed: ConsumedBy;
}

/**
 * `mode` keeps definition changes and checkpoint resets apart: a reset re-applies the source to the
 * table as it is, so rows of keys that a changed definition no longer sends stay, which the model
 * (a fold of what was consumed) does not describe.
 */
async function runSequence(
  options: ModelOptions,
  filesPerBatch: number,
  mode: "deploys" | "resets",
  steps: readonly Step[],
) {
  const h = new RewindHarness();
  let drop: number | null = null;
  let columns: ModelOptions = { ...options, writesB: true };
  await h.deploy(definition(h.landingUri, columns, filesPerBatch, drop));
  const files = new Map<string, readonly SentEvent[]>();
  const sent: SentEvent[] = [];
  let consumed: ConsumedBy = { A: [], B: [] };
  const points: Point[] = [];
  const consumeAll = (src: Source) => [
    ...consumed[src],
    ...[...files.keys()]
      .filter((file) => !consumed[src].some((c) => c.file === file))
      .map((file) => ({ file, drop })),
  ];
  const all = () => [...files.keys()].map((file) => ({ file, drop }));

  const check = async () => {
    const events = SOURCES.flatMap((src) =>
      consumed[src].flatMap((c) =>
        files.get(c.file)!.filter((e) => e.src === src && (c.drop === null || e.a !== c.drop)),
      ),
    );
    const scd1 = (await h.rows("scd1", "k")).map((r) => ({
      k: Number(r["k"]),
      a: r["a"] === null ? null : Number(r["a"]),
      b: (r["b"] ?? null) as string | null,
    }));
    const scd2 = (await h.rows("scd2", "k"))
      .map((r) => ({
        k: Number(r["k"]),
        a: r["a"] === null ? null : Number(r["a"]),
        b: (r["b"] ?? null) as string | null,
        __START_AT: Number(r["__START_AT"]),
        __END_AT: r["__END_AT"] === null ? null : Number(r["__END_AT"]),
      }))
      .sort((x, y) => x.k - y.k || x.__START_AT - y.__START_AT);
    expect(scd1).toEqual(scd1Model(events, columns));
    expect(scd2).toEqual(scd2Model(events, { ...columns, tracked: trackedOf(columns) }));
  };

  for (const s of steps) {
    switch (s.kind) {
      case "arrive": {
        const events = [...s.events, ...(s.repeat > 0 ? sent.slice(-s.repeat) : [])];
        sent.push(...s.events);
        await landJsonFile(h, files, events);
        continue;
      }
      case "update":
        if (s.only) {
          await h.run([flowName("scd1", s.only), flowName("scd2", s.only)]);
          consumed = { ...consumed, [s.only]: consumeAll(s.only) };
        } else {
          await h.run();
          consumed = { A: consumeAll("A"), B: consumeAll("B") };
        }
        if (s.capture) {
          const point = await captureRewindPoint(h.env());
          if (point) points.push({ id: point.rewindPointId, consumed });
        }
        break;
      case "rewind": {
        if (points.length === 0) continue;
        const target = points[s.pick % points.length]!;
        await h.rewind({ rewind_point_id: target.id });
        consumed = target.consumed;
        break;
      }
      case "deploy":
        if (mode !== "deploys") continue;
        drop = s.drop;
        await h.deploy(definition(h.landingUri, columns, filesPerBatch, drop));
        continue;
      case "columns": {
        if (mode !== "deploys" || s.writesB === columns.writesB) continue;
        columns = { ...columns, writesB: s.writesB };
        await h.deploy(definition(h.landingUri, columns, filesPerBatch, drop));
        const flows = SOURCES.flatMap((src) => [flowName("scd1", src), flowName("scd2", src)]);
        await h.refresh(s.writesB ? { reset_checkpoint_selection: flows } : { full_refresh: true });
        consumed = { A: all(), B: all() };
        // The points before hold state of the other column list: a replay from them is refused.
        points.length = 0;
        break;
      }
      case "reset":
        // The reset flows re-read every file against an empty state; their tables keep their rows.
        // The update runs every flow, so the others catch up.
        if (mode !== "resets") continue;
        await h.refresh({
          reset_checkpoint_selection: (s.only ? [s.only] : SOURCES).flatMap((src) => [
            flowName("scd1", src),
            flowName("scd2", src),
          ]),
        });
        consumed = {
          A: s.only === "B" ? consumeAll("A") : all(),
          B: s.only === "A" ? consumeAll("B") : all(),
        };
        break;
    }
    await check();
  }
}

const modelOptions: fc.Arbitrary<ModelOptions> = fc.record({
  ignoreNullUpdates: fc.boolean(),
  tracked: fc.constantFrom<("a" | "b")[]>(["a"], ["a", "b"], ["b"]),
});

describe("AUTO CDC against a reference model", () => {
  it("keeps the SCD type 1 and type 2 targets equal to the model through batches, rewinds and resets", async () => {
    await fc.assert(
      fc.asyncProperty(
        modelOptions,
        fc.integer({ min: 1, max: 3 }),
        fc.constantFrom("deploys" as const, "resets" as const),
        fc.array(step, { minLength: 1, maxLength: 10 }),
        (options, filesPerBatch, mode, steps) => runSequence(options, filesPerBatch, mode, steps),
      ),
      {
        numRuns: Number(process.env["RUNS"] ?? 40),
        examples: [
          // Rewind behind a late update, fix the definition, replay: the replay must start from the
          // point's per-key state, not the abandoned timeline's (whose seq 5 would hide seq 3).
          [
            { ignoreNullUpdates: false, tracked: ["a"] },
            1,
            "deploys",
            [
              { kind: "arrive", events: [{ k: 1, seq: 1, op: "U", a: 0, b: "x", src: "A" }], repeat: 0 },
              { kind: "update", capture: true },
              { kind: "arrive", events: [{ k: 1, seq: 5, op: "U", a: 2, b: "x", src: "A" }], repeat: 0 },
              { kind: "update", capture: false },
              { kind: "rewind", pick: 0 },
              { kind: "deploy", drop: 2 },
              { kind: "arrive", events: [{ k: 1, seq: 3, op: "U", a: 1, b: "y", src: "A" }], repeat: 0 },
              { kind: "update", capture: false },
            ],
          ],
          // A late, older change through flow B after a newer one through flow A: A's stays, in SCD
          // type 1 and in SCD type 2's history; then B alone is reset and re-reads.
          [
            { ignoreNullUpdates: false, tracked: ["a"] },
            1,
            "resets",
            [
              { kind: "arrive", events: [{ k: 1, seq: 5, op: "U", a: 2, b: "x", src: "A" }], repeat: 0 },
              { kind: "update", capture: true, only: "A" },
              {
                kind: "arrive",
                events: [
                  { k: 1, seq: 3, op: "U", a: 1, b: "y", src: "B" },
                  { k: 2, seq: 4, op: "D", a: null, b: null, src: "B" },
                ],
                repeat: 0,
              },
              { kind: "update", capture: false, only: "B" },
              { kind: "arrive", events: [{ k: 2, seq: 2, op: "U", a: 0, b: "x", src: "A" }], repeat: 0 },
              { kind: "update", capture: false },
              { kind: "reset", only: "B" },
              { kind: "rewind", pick: 0 },
              { kind: "update", capture: false, only: "B" },
            ],
          ],
          // The column list changes between deploys: b dropped (a full refresh), then written again
          // (a checkpoint reset of every flow re-reads it into the table).
          [
            { ignoreNullUpdates: true, tracked: ["b"] },
            2,
            "deploys",
            [
              { kind: "arrive", events: [{ k: 1, seq: 1, op: "U", a: 0, b: "x", src: "A" }], repeat: 0 },
              { kind: "update", capture: true },
              { kind: "columns", writesB: false },
              { kind: "arrive", events: [{ k: 1, seq: 2, op: "U", a: 1, b: "y", src: "B" }], repeat: 0 },
              { kind: "update", capture: false },
              { kind: "columns", writesB: true },
              { kind: "arrive", events: [{ k: 2, seq: 3, op: "U", a: 1, b: null, src: "A" }], repeat: 0 },
              { kind: "update", capture: false },
            ],
          ],
          // A late event merges two SCD type 2 versions, then a reset re-reads everything in one
          // batch: the version starting at 5 the first run wrote must go (the state no longer has it).
          [
            { ignoreNullUpdates: false, tracked: ["a"] },
            3,
            "resets",
            [
              {
                kind: "arrive",
                events: [
                  { k: 1, seq: 2, op: "U", a: 0, b: "x", src: "A" },
                  { k: 1, seq: 5, op: "U", a: 1, b: "x", src: "A" },
                ],
                repeat: 0,
              },
              { kind: "update", capture: false },
              { kind: "arrive", events: [{ k: 1, seq: 3, op: "U", a: 1, b: "y", src: "A" }], repeat: 0 },
              { kind: "reset" },
            ],
          ],
        ],
      },
    );
  }, 3_600_000);
});
