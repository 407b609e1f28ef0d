import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { DeltaTable } from "../../shared/delta/index.ts";
import { vacuumDataset } from "../../shared/rewind/rewind-vacuum.ts";
import {
  landJsonFile,
  ModelPoints,
  rewindStep,
  updateStep,
  type StatefulStep,
} from "../support/rewind/model-sequence.ts";
import { RewindHarness } from "../support/rewind/rewind-harness.ts";

/**
 * A materialized view kept incrementally equals the view recomputed from all data: random appends
 * (in random batch splits: one batch per update, or one per file), deletes and RESTOREs (to an
 * earlier version: the view's state then holds rows its input lost) straight on the input table,
 * point captures, rewinds to random points (by id or by timestamp, onto abandoned timelines),
 * compactions of the input, time passing beyond the points' retention, zero-retention VACUUMs of the
 * input and the view (which must keep the view's state every live point restores), full refreshes
 * and definition changes, run through the real engine and the update driver on memory stores.
 * After every step the view's table equals the model: the view's query evaluated over the input's
 * rows (or, right after a rewind, what the view held at the point).
 *
 * The view's partial aggregates live in the state store, named by its refresh commits; a rewind
 * restores the view's table and so its state. An engine that kept the abandoned timeline's partials
 * after a rewind would count those rows again on the replay, and fail here.
 *
 * RUNS sets the number of runs (default 15).
 */

interface Row {
  readonly k: number | null;
  readonly v: number | null;
}

interface Query {
  readonly sql: string;
  /** The model of the query over all rows. */
  readonly evaluate: (rows: readonly Row[]) => ViewRow[];
}

interface ViewRow {
  readonly k: number | null;
  readonly n: number;
  readonly total: number | null;
  readonly lo: number | null;
  readonly hi: number | null;
  readonly mean: number | null;
}

function grouped(rows: readonly Row[], count: (r: Row) => boolean): ViewRow[] {
  const groups = new Map<number | null, Row[]>();
  for (const r of rows) groups.set(r.k, [...(groups.get(r.k) ?? []), r]);
  return [...groups].map(([k, members]) => {
    const values = members.map((m) => m.v).filter((v): v is number => v !== null);
    const total = values.length === 0 ? null : values.reduce((a, b) => a + b, 0);
    return {
      k,
      n: members.filter(count).length,
      total,
      lo: values.length === 0 ? null : Math.min(...values),
      hi: values.length === 0 ? null : Math.max(...values),
      mean: total === null ? null : total / values.length,
    };
  });
}

/** The same figures of each group's distinct values (min and max are the same with DISTINCT). */
function groupedDistinct(rows: readonly Row[]): ViewRow[] {
  return grouped(rows, () => true).map((row) => {
    const values = [...new Set(rows.filter((r) => r.k === row.k && r.v !== null).map((r) => r.v!))];
    const total = values.length === 0 ? null : values.reduce((a, b) => a + b, 0);
    return { ...row, n: values.length, total, mean: total === null ? null : total / values.length };
  });
}

const QUERIES: readonly Query[] = [
  {
    sql: "SELECT k, count(*) AS n, sum(v) AS total, min(v) AS lo, max(v) AS hi, avg(v) AS mean FROM raw GROUP BY k",
    evaluate: (rows) => grouped(rows, () => true),
  },
  {
    sql: "SELECT k, count(v) AS n, sum(v) AS total, min(v) AS lo, max(v) AS hi, avg(v) AS mean FROM raw WHERE v IS NULL OR v > 3 GROUP BY k",
    evaluate: (rows) =>
      grouped(
        rows.filter((r) => r.v === null || r.v > 3),
        (r) => r.v !== null,
      ),
  },
  {
    // An ORDER BY of output columns orders only the final rows: the partials are kept as without it.
    sql: "SELECT k, count(*) AS n, sum(v) AS total, min(v) AS lo, max(v) AS hi, avg(v) AS mean FROM raw GROUP BY k ORDER BY hi DESC, 1",
    evaluate: (rows) => grouped(rows, () => true),
  },
  {
    // DISTINCT aggregates keep each group's set of distinct values as their partial.
    sql: "SELECT k, count(DISTINCT v) AS n, sum(DISTINCT v) AS total, min(DISTINCT v) AS lo, max(v) AS hi, avg(DISTINCT v) AS mean FROM raw GROUP BY k",
    evaluate: groupedDistinct,
  },
];

interface ModelState {
  /** The files the input has read, in order, and the rows it holds (after deletes). */
  readonly processedFiles: readonly string[];
  readonly raw: readonly Row[];
  /** What the view's table holds. */
  readonly view: readonly ViewRow[];
}

type Step =
  | Exclude<StatefulStep<Row>, { kind: "checkpointReset" }>
  | { readonly kind: "delete"; readonly v: number }
  | { readonly kind: "restore"; readonly pick: number }
  | { readonly kind: "redefine" }
  | { readonly kind: "vacuum" }
  | { readonly kind: "age" };

const row = fc.record({
  k: fc.oneof(
    { weight: 6, arbitrary: fc.integer({ min: 1, max: 3 }) },
    { weight: 1, arbitrary: fc.constant(null) },
  ),
  v: fc.oneof(
    { weight: 8, arbitrary: fc.integer({ min: 1, max: 9 }) },
    { weight: 1, arbitrary: fc.constant(null) },
  ),
});
const step: fc.Arbitrary<Step> = fc.oneof(
  { weight: 8, arbitrary: updateStep(row, 3) },
  { weight: 4, arbitrary: rewindStep },
  {
    weight: 1,
    arbitrary: fc.record({ kind: fc.constant("delete" as const), v: fc.integer({ min: 1, max: 9 }) }),
  },
  { weight: 1, arbitrary: fc.constant({ kind: "redefine" as const }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant("restore" as const), pick: fc.nat() }) },
  { weight: 1, arbitrary: fc.constant({ kind: "vacuum" as const }) },
  { weight: 1, arbitrary: fc.constant({ kind: "age" as const }) },
  { weight: 1, arbitrary: fc.constant({ kind: "fullRefresh" as const }) },
);

/** How the input compacts: Ebb's default, or after every second file (so compactions replace files the view has not read yet, also on the replay after a rewind). */
type Compaction = "default" | "often";

function definition(landingUri: string, perFile: boolean, query: Query, compaction: Compaction) {
  return {
    name: "Incremental view property",
    catalog: "main",
    schema: "viewprop",
    configuration: { "pipelines.rewind.enabled": "true" },
    datasets: [
      {
        name: "raw",
        type: "streaming_table",
        ...(compaction === "often" ? { properties: { "ebb.autoCompact.minNumFiles": "2" } } : {}),
        flows: [
          {
            name: "ingest",
            source: {
              type: "auto_loader",
              path: landingUri,
              format: "json",
              schema: { k: "BIGINT", v: "BIGINT" },
            },
            sql: "SELECT k, v FROM source",
            ...(perFile ? { options: { max_files_per_batch: 1 } } : {}),
          },
        ],
      },
      { name: "totals", type: "materialized_view", sql: query.sql },
    ],
  };
}

const num = (value: unknown): number | null => (value === null || value === undefined ? null : Number(value));
const round = (value: number | null) => (value === null ? null : Math.round(value * 1e9) / 1e9);
const ordered = (rows: readonly ViewRow[]) =>
  [...rows].map((r) => ({ ...r, mean: round(r.mean) })).sort((a, b) => (a.k ?? -1) - (b.k ?? -1));

/** Runs the steps; returns the refresh kinds the view's events reported, in order, and the view's state files VACUUM deleted. */
async function runSequence(
  perFile: boolean,
  steps: readonly Step[],
  compaction: Compaction = "default",
  firstQuery = 0,
): Promise<{ kinds: string[]; vacuumedState: string[] }> {
  const h = new RewindHarness();
  let query = firstQuery;
  await h.deploy(definition(h.landingUri, perFile, QUERIES[query]!, compaction));
  const files = new Map<string, Row[]>();
  let model: ModelState = { processedFiles: [], raw: [], view: [] };
  const points = new ModelPoints<ModelState>(h);
  const vacuumedState: string[] = [];
  // The input's versions after each step, with its rows then (what a RESTORE to one gives back).
  const inputVersions: { version: number; raw: readonly Row[] }[] = [];
  let inputId: string | undefined;
  const rawTable = async () => {
    const table = await DeltaTable.open(h.tableStore("raw"), { clock: h.clock.now });
    try {
      return { version: table.snapshot.version, id: table.snapshot.metadata.id };
    } finally {
      await table.close();
    }
  };
  const refreshed = (state: ModelState): ModelState => ({
    ...state,
    view: QUERIES[query]!.evaluate(state.raw),
  });
  const ingest = (state: ModelState): ModelState => {
    const fresh = [...files.keys()].filter((f) => !state.processedFiles.includes(f)).sort();
    return {
      ...state,
      processedFiles: [...state.processedFiles, ...fresh],
      raw: [...state.raw, ...fresh.flatMap((f) => files.get(f)!)],
    };
  };

  const check = async () => {
    const table = (await h.rows("totals", "k")).map((r) => ({
      k: num(r["k"]),
      n: Number(r["n"]),
      total: num(r["total"]),
      lo: num(r["lo"]),
      hi: num(r["hi"]),
      mean: num(r["mean"]),
    }));
    expect(ordered(table)).toEqual(ordered(model.view));
  };

  // Until the input has a table the view cannot be read: every sequence starts with one file.
  const first: Step = { kind: "update", files: [[{ k: 1, v: 1 }]], capture: false };
  for (const s of [first, ...steps]) {
    switch (s.kind) {
      case "update": {
        for (const rows of s.files) await landJsonFile(h, files, rows);
        await h.run();
        model = refreshed(ingest(model));
        if (s.capture) await points.capture(model);
        break;
      }
      case "rewind": {
        const restored = await points.rewind(s);
        if (restored === undefined) continue;
        model = restored;
        break;
      }
      case "delete": {
        // Straight on the input table, between updates (as a user's DELETE): the view must not keep
        // the deleted rows' partials.
        if (model.processedFiles.length === 0) continue;
        const table = await DeltaTable.open(h.tableStore("raw"), { clock: h.clock.now });
        try {
          await table.delete(`v = ${s.v}`);
        } finally {
          await table.close();
        }
        model = { ...model, raw: model.raw.filter((r) => r.v !== s.v) };
        await h.run();
        model = refreshed(ingest(model));
        break;
      }
      case "restore": {
        // A user's RESTORE of the input, not a rewind, to a version before the one the view last
        // read: its state holds rows the input no longer has, so it must recompute.
        const { version } = await rawTable();
        const targets = inputVersions.filter((v) => v.version < version);
        if (targets.length === 0) continue;
        const target = targets[s.pick % targets.length]!;
        const table = await DeltaTable.open(h.tableStore("raw"), { clock: h.clock.now });
        try {
          await table.restore({ to: { version: target.version } });
        } finally {
          await table.close();
        }
        model = { ...model, raw: target.raw };
        await h.run();
        model = refreshed(ingest(model));
        break;
      }
      case "redefine":
        query = (query + 1) % QUERIES.length;
        await h.deploy(definition(h.landingUri, perFile, QUERIES[query]!, compaction));
        await h.run();
        model = refreshed(ingest(model));
        break;
      case "vacuum":
        // Zero retention: every file no live point (or HEAD) needs goes, the view's state included.
        for (const dataset of ["raw", "totals"]) {
          const result = await vacuumDataset(h.env(), dataset, {
            retentionHours: 0,
            allowShortRetention: true,
          });
          if (dataset === "totals") vacuumedState.push(...result.stateFilesToDelete);
          // Only the versions live points protect keep their files: the others cannot be restored.
          if (dataset === "raw") {
            const kept = inputVersions.filter((v) => result.protectedVersions.includes(v.version));
            inputVersions.splice(0, inputVersions.length, ...kept);
          }
        }
        break;
      case "age":
        // Past the rewind points' retention (7 days): every point so far expires, and with them the
        // view's state they restore becomes VACUUM's to remove.
        h.clock.advance(8 * 24 * 3600 * 1000);
        points.makeStale();
        // The input's log keeps 30 days: its older versions are not for restoring any more.
        inputVersions.length = 0;
        break;
      case "fullRefresh":
        await h.refresh({ full_refresh: true });
        points.makeStale();
        model = refreshed(ingest({ processedFiles: [], raw: [], view: [] }));
        break;
    }
    await check();
    const { version, id } = await rawTable();
    if (id !== inputId) inputVersions.length = 0;
    inputId = id;
    inputVersions.push({ version, raw: model.raw });
  }
  const kinds = (await h.eventsOf("flow_progress"))
    .filter((e) => e.origin.flow_name === "totals")
    .map((e) => String((e.details["flow_progress"] as { refresh?: string }).refresh));
  return { kinds, vacuumedState };
}

describe("incremental materialized views against a reference model", () => {
  it("keep the view equal to its query over all data through appends, deletes, rewinds, redefinitions and full refreshes", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.boolean(),
        fc.array(step, { minLength: 1, maxLength: 7 }),
        fc.constantFrom<Compaction>("default", "often"),
        fc.nat({ max: QUERIES.length - 1 }),
        (perFile, steps, compaction, firstQuery) =>
          runSequence(perFile, steps, compaction, firstQuery).then(() => undefined),
      ),
      {
        numRuns: Number(process.env["RUNS"] ?? 15),
        examples: [
          // A rewind onto the point before the last update: the replay adds to the restored partials.
          [
            true,
            [
              { kind: "update", files: [[{ k: 1, v: 1 }]], capture: true },
              { kind: "update", files: [[{ k: 1, v: 2 }], [{ k: 2, v: 5 }]], capture: true },
              { kind: "rewind", pick: 0, byTimestamp: false },
              { kind: "update", files: [[{ k: 1, v: 4 }]], capture: false },
              { kind: "rewind", pick: 1, byTimestamp: false },
              { kind: "update", files: [], capture: false },
            ],
            "default",
            0,
          ],
          // The same with compactions: the replays' appends are compacted with restored files.
          [
            true,
            [
              { kind: "update", files: [[{ k: 1, v: 1 }]], capture: true },
              { kind: "update", files: [[{ k: 1, v: 2 }], [{ k: 2, v: 5 }]], capture: true },
              { kind: "rewind", pick: 0, byTimestamp: false },
              { kind: "update", files: [[{ k: 1, v: 4 }]], capture: false },
              { kind: "rewind", pick: 1, byTimestamp: false },
              { kind: "update", files: [[{ k: 3, v: 6 }]], capture: false },
            ],
            "often",
            3, // DISTINCT aggregates
          ],
        ],
      },
    );
  }, 3_600_000);

  it("refreshes incrementally after appends and after a rewind, and recomputes otherwise", async () => {
    const { kinds } = await runSequence(false, [
      { kind: "update", files: [[{ k: 1, v: 3 }]], capture: true },
      { kind: "update", files: [[{ k: 1, v: 2 }]], capture: true },
      { kind: "rewind", pick: 0, byTimestamp: false },
      { kind: "update", files: [[{ k: 2, v: 4 }]], capture: false },
      { kind: "delete", v: 4 },
      { kind: "redefine" },
      { kind: "update", files: [[{ k: 2, v: 7 }]], capture: false },
      { kind: "fullRefresh" },
    ]);
    expect(kinds).toEqual([
      "FULL_RECOMPUTE", // no table yet
      "INCREMENTAL",
      "INCREMENTAL",
      "INCREMENTAL", // the replay after the rewind, from the restored state
      "FULL_RECOMPUTE", // the input had a DELETE
      "FULL_RECOMPUTE", // the definition changed
      "INCREMENTAL",
      "FULL_RECOMPUTE", // full refresh
    ]);
  }, 600_000);

  it("refreshes incrementally from the restored state when compactions replaced the files it reads", async () => {
    const { kinds } = await runSequence(
      true,
      [
        { kind: "update", files: [[{ k: 1, v: 3 }]], capture: true },
        { kind: "update", files: [[{ k: 1, v: 2 }], [{ k: 2, v: 5 }]], capture: true },
        { kind: "rewind", pick: 0, byTimestamp: false },
        { kind: "update", files: [[{ k: 2, v: 4 }]], capture: false },
        { kind: "update", files: [[{ k: 3, v: 8 }]], capture: false },
      ],
      "often",
    );
    // Every refresh but the first reads the appended files, compacted away or not (the rewind itself
    // refreshes nothing).
    expect(kinds).toEqual(["FULL_RECOMPUTE", "INCREMENTAL", "INCREMENTAL", "INCREMENTAL", "INCREMENTAL"]);
  }, 600_000);

  it("keeps through VACUUM the view's state that live points restore, and removes the rest", async () => {
    const { kinds, vacuumedState } = await runSequence(false, [
      { kind: "update", files: [[{ k: 1, v: 3 }]], capture: false },
      { kind: "update", files: [[{ k: 1, v: 2 }]], capture: false },
      { kind: "age" },
      { kind: "update", files: [[{ k: 2, v: 4 }]], capture: true },
      { kind: "update", files: [[{ k: 2, v: 1 }]], capture: false },
      { kind: "vacuum" },
      { kind: "rewind", pick: 0, byTimestamp: false },
      { kind: "update", files: [[{ k: 3, v: 5 }]], capture: false },
    ]);
    // The state of the refreshes before the points' retention went; the point's was kept, so the
    // replay after the rewind to it continues from it.
    expect(vacuumedState.length).toBeGreaterThan(0);
    expect(vacuumedState.every((key) => key.includes("/view.totals/"))).toBe(true);
    expect(kinds).toEqual([
      "FULL_RECOMPUTE",
      "INCREMENTAL",
      "INCREMENTAL",
      "INCREMENTAL",
      "INCREMENTAL",
      "INCREMENTAL",
    ]);
  }, 600_000);
});
