import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { loadSnapshot, parseSchema } from "../../shared/delta/index.ts";
import { IncompatibleSchemaChangeError } from "../../shared/engine/errors.ts";
import { RewindBeforeFullRefreshError } from "../../shared/rewind/errors.ts";
import { captureRewindPoint } from "../../shared/rewind/rewind-points.ts";
import { vacuumDataset } from "../../shared/rewind/rewind-vacuum.ts";
import { landJsonFile } from "../support/rewind/model-sequence.ts";
import { RewindHarness } from "../support/rewind/rewind-harness.ts";

/**
 * No duplicates, no gaps (semantics.md "Replay"): random sequences of file arrivals, definition
 * changes, updates, point captures, rewinds to random points (by id or by timestamp, including points
 * captured on timelines a later rewind abandoned, and dry runs whose summaries are rewound to later),
 * checkpoint resets, full refreshes and zero-retention VACUUMs (which must keep every live point
 * restorable), and schema-evolving deploys (a deploy that adds a column evolves the table, older rows
 * read NULL, a rewind to before it restores the old schema; one that drops it again is refused
 * before anything runs, until a rewind, a full refresh or a deploy that adds it back), run through the real engine and the rewind domain on memory
 * stores, against a reference model. After every step each streaming table holds exactly the model's
 * rows: the rows of the files processed on the live timeline, each transformed by the definition that
 * was current when its batch ran — no full refresh is needed between rewind cycles.
 *
 * RUNS sets the number of runs (default 200; e.g. RUNS=2000 for a nightly run).
 */

interface Row {
  readonly id: number;
  readonly val: number;
  /** The column a tagged deploy adds: NULL in rows written before the table had it. */
  readonly tag: number | null;
}

/** The model of the live timeline: what each table holds and how far each flow has read. */
interface ModelState {
  readonly processedFiles: readonly string[];
  readonly raw: readonly number[];
  readonly cleanedConsumed: number;
  readonly cleaned: readonly Row[];
  /** Whether cleaned has a table, and whether its schema has the `tag` column. */
  readonly cleanedTable: "none" | "plain" | "tagged";
}

interface ModelPoint {
  readonly id: string;
  readonly time: number;
  readonly state: ModelState;
  /** Captured before a full refresh: a rewind to it is refused. */
  stale: boolean;
}

type Step =
  /** Files arrive (maybe none), an update runs, and it captures a point at its end (as the pipeline does). */
  | { readonly kind: "update"; readonly files: readonly number[]; readonly capture: boolean }
  | { readonly kind: "arrive"; readonly rows: number }
  /** A new definition; `tagged` adds the `tag` column to cleaned (leaving it out drops it again). */
  | { readonly kind: "deploy"; readonly factor: number; readonly tagged: boolean }
  | { readonly kind: "capture" }
  | {
      readonly kind: "rewind";
      readonly pick: number;
      readonly byTimestamp: boolean;
      readonly dryRun: boolean;
    }
  | { readonly kind: "checkpointReset" }
  | { readonly kind: "fullRefresh" }
  /** VACUUM every table with zero retention: only the files of the latest version and of live points stay. */
  | { readonly kind: "vacuum" };

const step: fc.Arbitrary<Step> = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.record({
      kind: fc.constant("update" as const),
      files: fc.array(fc.integer({ min: 1, max: 3 }), { maxLength: 2 }),
      capture: fc.constantFrom(true, true, false),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({ kind: fc.constant("arrive" as const), rows: fc.integer({ min: 1, max: 3 }) }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant("deploy" as const),
      factor: fc.integer({ min: 1, max: 3 }),
      tagged: fc.boolean(),
    }),
  },
  { weight: 1, arbitrary: fc.constant({ kind: "capture" as const }) },
  {
    weight: 4,
    arbitrary: fc.record({
      kind: fc.constant("rewind" as const),
      pick: fc.nat(),
      byTimestamp: fc.boolean(),
      dryRun: fc.constantFrom(false, false, false, true),
    }),
  },
  { weight: 1, arbitrary: fc.constant({ kind: "checkpointReset" as const }) },
  { weight: 1, arbitrary: fc.constant({ kind: "fullRefresh" as const }) },
  { weight: 1, arbitrary: fc.constant({ kind: "vacuum" as const }) },
);

interface Deployed {
  readonly factor: number;
  readonly tagged: boolean;
}

function definition(landingUri: string, { factor, tagged }: Deployed) {
  return {
    name: "Property",
    catalog: "main",
    schema: "prop",
    configuration: { "pipelines.rewind.enabled": "true" },
    datasets: [
      {
        name: "raw",
        type: "streaming_table",
        flows: [
          {
            name: "ingest",
            source: { type: "auto_loader", path: landingUri, format: "json", schema: { id: "BIGINT" } },
            sql: "SELECT id FROM source",
          },
        ],
      },
      {
        name: "cleaned",
        type: "streaming_table",
        flows: [
          {
            name: "cleanse",
            source: { type: "stream", dataset: "raw" },
            sql: `SELECT id, id * ${factor} AS val${tagged ? ", id % 7 AS tag" : ""} FROM source`,
          },
        ],
      },
    ],
  };
}

/**
 * An update on the model: new files into raw (in name order), raw's new rows into cleaned; or
 * "refused" when the definition drops the `tag` column cleaned's table has.
 */
function runModel(
  state: ModelState,
  files: ReadonlyMap<string, readonly number[]>,
  deployed: Deployed,
): ModelState | "refused" {
  if (state.cleanedTable === "tagged" && !deployed.tagged) return "refused";
  const fresh = [...files.keys()].filter((f) => !state.processedFiles.includes(f)).sort();
  const raw = [...state.raw, ...fresh.flatMap((f) => files.get(f)!)];
  const cleaned = [
    ...state.cleaned,
    ...raw
      .slice(state.cleanedConsumed)
      .map((id) => ({ id, val: id * deployed.factor, tag: deployed.tagged ? id % 7 : null })),
  ];
  // A batch creates or evolves the table; without one it stays as it is.
  const batch = raw.length > state.cleanedConsumed;
  const cleanedTable = !batch
    ? state.cleanedTable
    : state.cleanedTable === "tagged" || deployed.tagged
      ? "tagged"
      : "plain";
  return {
    processedFiles: [...state.processedFiles, ...fresh],
    raw,
    cleanedConsumed: raw.length,
    cleaned,
    cleanedTable,
  };
}

async function tableExists(h: RewindHarness, dataset: string): Promise<boolean> {
  return (await h.tableStore(dataset).list("_delta_log/", { pageSize: 1 })).objects.length > 0;
}

const EMPTY: ModelState = {
  processedFiles: [],
  raw: [],
  cleanedConsumed: 0,
  cleaned: [],
  cleanedTable: "none",
};

async function runSequence(steps: readonly Step[]): Promise<void> {
  const h = new RewindHarness();
  let deployed: Deployed = { factor: 1, tagged: false };
  await h.deploy(definition(h.landingUri, deployed));
  const files = new Map<string, number[]>();
  let model = EMPTY;
  const points: ModelPoint[] = [];
  let nextId = 1;

  const check = async () => {
    const raw = (await h.rows("raw")).map((r) => Number(r["id"]));
    const byIdThenVal = (a: Row, b: Row) => a.id - b.id || a.val - b.val || (a.tag ?? -1) - (b.tag ?? -1);
    const tagged = model.cleanedTable === "tagged";
    const cleaned = (await h.rows("cleaned")).map((r) => ({
      id: Number(r["id"]),
      val: Number(r["val"]),
      tag: tagged && r["tag"] !== null ? Number(r["tag"]) : null,
    }));
    expect(raw).toEqual([...model.raw].sort((a, b) => a - b));
    expect(cleaned.sort(byIdThenVal)).toEqual([...model.cleaned].sort(byIdThenVal));
    if (model.cleanedTable !== "none") {
      const schema = parseSchema((await loadSnapshot(h.tableStore("cleaned"))).metadata.schemaString);
      expect(schema.fields.map((f) => f.name)).toEqual(tagged ? ["id", "val", "tag"] : ["id", "val"]);
    }
  };

  const arrive = async (rows: number) => {
    const ids = Array.from({ length: rows }, () => nextId++);
    await landJsonFile(h, files, ids, (id) => ({ id }));
  };
  const capture = async () => {
    const point = await captureRewindPoint(h.env());
    if (point) points.push({ id: point.rewindPointId, time: point.time, state: model, stale: false });
  };

  for (const s of steps) {
    switch (s.kind) {
      case "arrive":
        await arrive(s.rows);
        continue;
      case "deploy":
        deployed = { factor: s.factor, tagged: s.tagged };
        await h.deploy(definition(h.landingUri, deployed));
        continue;
      case "update": {
        for (const rows of s.files) await arrive(rows);
        const next = runModel(model, files, deployed);
        if (next === "refused") {
          await expect(h.run()).rejects.toThrow(IncompatibleSchemaChangeError);
          break;
        }
        await h.run();
        model = next;
        if (s.capture) await capture();
        break;
      }
      case "capture":
        await capture();
        continue;
      case "rewind": {
        if (points.length === 0) continue;
        const target = points[s.pick % points.length]!;
        const spec = s.byTimestamp
          ? { rewind_timestamp: new Date(target.time).toISOString(), dry_run: s.dryRun }
          : { rewind_point_id: target.id, dry_run: s.dryRun };
        if (target.stale) {
          await expect(h.rewind(spec)).rejects.toThrow(RewindBeforeFullRefreshError);
          break;
        }
        const result = await h.rewind(spec);
        if (s.dryRun) {
          points.push({ id: result.summaryEventId, time: target.time, state: target.state, stale: false });
        } else {
          model = target.state;
        }
        break;
      }
      case "checkpointReset": {
        const next = runModel({ ...model, cleanedConsumed: 0 }, files, deployed);
        if (next === "refused") {
          const refused = h.refresh({ reset_checkpoint_selection: ["cleanse"] });
          await expect(refused).rejects.toThrow(IncompatibleSchemaChangeError);
          break;
        }
        await h.refresh({ reset_checkpoint_selection: ["cleanse"] });
        model = next;
        break;
      }
      case "vacuum":
        for (const dataset of ["raw", "cleaned"]) {
          if (!(await tableExists(h, dataset))) continue;
          await vacuumDataset(h.env(), dataset, { retentionHours: 0, allowShortRetention: true });
        }
        break;
      case "fullRefresh":
        await h.refresh({ full_refresh: true });
        for (const point of points) point.stale = true;
        model = runModel(EMPTY, files, deployed) as ModelState; // a new table is never refused
        break;
    }
    await check();
  }
}

describe("rewind and replay against a reference model", () => {
  it("leaves every streaming table equal to the model after every step", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(step, { minLength: 1, maxLength: 8 }), (steps) => runSequence(steps)),
      {
        numRuns: Number(process.env["RUNS"] ?? 200),
        // The cycle every user goes through, always among the runs: rewind behind two updates, replay.
        examples: [
          // A table created empty (a first update with no input) takes a deploy that drops a column.
          [
            [
              { kind: "deploy", factor: 1, tagged: true },
              { kind: "update", files: [], capture: true },
              { kind: "deploy", factor: 1, tagged: false },
              { kind: "update", files: [], capture: true },
              { kind: "arrive", rows: 1 },
            ],
          ],
          [
            [
              { kind: "update", files: [2], capture: true },
              { kind: "update", files: [2, 1], capture: true },
              { kind: "rewind", pick: 0, byTimestamp: false, dryRun: false },
              { kind: "update", files: [1], capture: false },
              { kind: "rewind", pick: 1, byTimestamp: true, dryRun: false },
              { kind: "update", files: [], capture: false },
            ],
          ],
          // A deploy adds a column; a rewind to before it restores the old schema; dropping it again is
          // refused until a rewind to before it.
          [
            [
              { kind: "update", files: [2], capture: true },
              { kind: "deploy", factor: 2, tagged: true },
              { kind: "update", files: [1], capture: true },
              { kind: "rewind", pick: 0, byTimestamp: false, dryRun: false },
              { kind: "update", files: [], capture: false },
              { kind: "deploy", factor: 1, tagged: false },
              { kind: "update", files: [1], capture: false },
              { kind: "rewind", pick: 0, byTimestamp: true, dryRun: false },
              { kind: "update", files: [1], capture: false },
            ],
          ],
          // VACUUM after a rewind must keep the abandoned timeline's point restorable.
          [
            [
              { kind: "update", files: [2], capture: true },
              { kind: "update", files: [1], capture: true },
              { kind: "rewind", pick: 0, byTimestamp: false, dryRun: false },
              { kind: "vacuum" },
              { kind: "rewind", pick: 1, byTimestamp: false, dryRun: false },
              { kind: "update", files: [1], capture: false },
            ],
          ],
        ],
      },
    );
  }, 3_600_000);
});
