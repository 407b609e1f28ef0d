import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  crossReads,
  CutPointNotFoundError,
  dependencyOrder,
  NoPointInCutError,
  NotDownstreamOfCutError,
  PipelineCycleError,
  planCut,
  type CrossRead,
  type CutPoint,
} from "../../../../shared/rewind/cuts/index.ts";

function point(
  id: string,
  time: number,
  tables: Record<string, number>,
  consumed: Record<string, number> = {},
): CutPoint {
  return {
    rewindPointId: id,
    time,
    tableVersions: new Map(Object.entries(tables)),
    consumed: new Map(Object.entries(consumed)),
  };
}

// bronze → silver → gold: silver's flow `s` reads bronze.raw, gold's flow `g` reads silver.clean.
const reads: CrossRead[] = crossReads([
  { pipeline: "bronze", tables: new Map([["s3://b/tables/raw/", "raw"]]), deltaReads: [] },
  {
    pipeline: "silver",
    tables: new Map([["s3://b/tables/clean", "clean"]]),
    deltaReads: [{ flow: "s", location: "s3://b/tables/raw" }],
  },
  {
    pipeline: "gold",
    tables: new Map([["s3://b/tables/agg", "agg"]]),
    deltaReads: [{ flow: "g", location: "s3://b/tables/clean/" }],
  },
]);

const points = new Map<string, CutPoint[]>([
  [
    "gold",
    [
      point("g1", 15, { agg: 1 }, { g: 1 }),
      point("g2", 25, { agg: 2 }, { g: 2 }),
      point("g3", 35, { agg: 3 }, { g: 4 }),
    ],
  ],
  [
    "silver",
    [
      point("s1", 12, { clean: 1 }, { s: 1 }),
      point("s2", 22, { clean: 2 }, { s: 3 }),
      point("s3", 32, { clean: 4 }, { s: 5 }),
    ],
  ],
  ["bronze", [point("b1", 10, { raw: 1 }), point("b2", 20, { raw: 3 }), point("b3", 30, { raw: 5 })]],
]);

describe("crossReads and dependencyOrder", () => {
  it("links a delta source to the pipeline owning its location, trailing slashes aside", () => {
    expect(reads).toEqual([
      { reader: "silver", flow: "s", upstream: "bronze", dataset: "raw" },
      { reader: "gold", flow: "g", upstream: "silver", dataset: "clean" },
    ]);
    expect(dependencyOrder(["gold", "silver", "bronze"], reads)).toEqual(["bronze", "silver", "gold"]);
  });

  it("refuses pipelines reading each other in a cycle, naming them", () => {
    const cycle = [...reads, { reader: "bronze", flow: "x", upstream: "gold", dataset: "agg" }];
    expect(() => dependencyOrder(["bronze", "silver", "gold"], cycle)).toThrow(PipelineCycleError);
  });
});

describe("planCut", () => {
  it("by time: upstream's newest point before the time, downstream's newest that read no further", () => {
    const plan = planCut({ target: { kind: "time", time: 31 }, points, reads });
    expect(plan.steps.map((s) => [s.pipeline, s.rewindPointId])).toEqual([
      ["bronze", "b3"],
      ["silver", "s2"], // s3 at 32 is after the time
      ["gold", "g2"], // g2 read clean v2 ≤ s2's clean v2
    ]);
    expect(plan.steps[2]?.upstreamVersions).toEqual([{ upstream: "silver", dataset: "clean", version: 2 }]);
  });

  it("by an upstream point: downstream points chosen by what they read, whatever their time", () => {
    const plan = planCut({
      target: { kind: "point", pipeline: "bronze", rewindPointId: "b2" },
      points,
      reads,
    });
    expect(plan.steps.map((s) => s.rewindPointId)).toEqual(["b2", "s2", "g2"]);
  });

  it("refuses the whole cut when a downstream pipeline read past it, naming the pipeline", () => {
    const early = new Map(points).set("silver", [point("s9", 5, { clean: 9 }, { s: 2 })]);
    const refuse = () =>
      planCut({ target: { kind: "point", pipeline: "bronze", rewindPointId: "b1" }, points: early, reads });
    expect(refuse).toThrow(NoPointInCutError);
    expect(refuse).toThrow(/"silver"/);
  });

  it("refuses a time before a pipeline's first point, an unknown point, and a pipeline not downstream", () => {
    expect(() => planCut({ target: { kind: "time", time: 11 }, points, reads })).toThrow(
      /"silver" has no live rewind point/,
    );
    expect(() =>
      planCut({ target: { kind: "point", pipeline: "bronze", rewindPointId: "zz" }, points, reads }),
    ).toThrow(CutPointNotFoundError);
    expect(() =>
      planCut({ target: { kind: "point", pipeline: "silver", rewindPointId: "s1" }, points, reads }),
    ).toThrow(NotDownstreamOfCutError);
  });

  it("in a random chain, every chosen point read no further than the cut, and is the newest that did", () => {
    const chainPoints = fc.array(
      fc.record({
        time: fc.integer({ min: 0, max: 100 }),
        version: fc.integer({ min: 0, max: 20 }),
        consumed: fc.integer({ min: -1, max: 20 }),
      }),
      { minLength: 1, maxLength: 6 },
    );
    fc.assert(
      fc.property(
        fc.array(chainPoints, { minLength: 2, maxLength: 5 }),
        fc.integer({ min: 0, max: 100 }),
        (chain, time) => {
          const names = chain.map((_, i) => `p${i}`);
          const chainReads = names
            .slice(1)
            .map((reader, i) => ({ reader, flow: "f", upstream: `p${i}`, dataset: "t" }));
          const all = new Map(
            chain.map((ps, i) => [
              names[i] as string,
              ps.map((p, j) => point(`${i}-${j}`, p.time, { t: p.version }, { f: p.consumed })),
            ]),
          );
          let plan;
          try {
            plan = planCut({ target: { kind: "time", time }, points: all, reads: chainReads });
          } catch (error) {
            expect(error).toBeInstanceOf(NoPointInCutError);
            return;
          }
          plan.steps.forEach((step, i) => {
            const mine = all.get(step.pipeline) ?? [];
            const chosen = mine.find((p) => p.rewindPointId === step.rewindPointId);
            expect(chosen && chosen.time <= time).toBe(true);
            const bound = i === 0 ? Infinity : (step.upstreamVersions[0]?.version ?? -1);
            expect(chosen?.consumed.get("f") ?? -1).toBeLessThanOrEqual(bound);
            const newer = mine.filter(
              (p) =>
                p.time <= time &&
                (i === 0 || (p.consumed.get("f") ?? -1) <= bound) &&
                p.time > (chosen?.time ?? 0),
            );
            expect(newer).toEqual([]);
          });
        },
      ),
    );
  });
});

describe("crossReads on the bucket's table folders", () => {
  it("links an s3:// path to the pipeline whose bucket-relative folder it ends in, and no other", () => {
    const found = crossReads([
      { pipeline: "up", tables: new Map([["tables/main/bronze/raw/", "raw"]]), deltaReads: [] },
      {
        pipeline: "down",
        tables: new Map([["tables/main/silver/clean/", "clean"]]),
        deltaReads: [
          { flow: "f", location: "s3://ebb-bucket/tables/main/bronze/raw" },
          { flow: "x", location: "s3://ebb-bucket/tables/main/bronze/rawer" },
        ],
      },
    ]);
    expect(found).toEqual([{ reader: "down", flow: "f", upstream: "up", dataset: "raw" }]);
  });
});
