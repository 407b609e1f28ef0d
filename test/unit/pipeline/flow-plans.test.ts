import { readFile, readdir } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SqlReferenceParser } from "../../../shared/pipeline/sql-references.ts";
import { tablePropertiesError } from "../../../shared/delta/index.ts";
import { validatePipeline, type ValidatedPipeline } from "../../../shared/pipeline/validate-pipeline.ts";
import { WINDOW_FINAL, WINDOW_ROWS, VIEW_FINAL } from "../../../shared/pipeline/plan/index.ts";
import definition from "./plan-pipeline.json" with { type: "json" };
import legacy from "./legacy-state-signatures.json" with { type: "json" };

/**
 * Validation compiles each flow and materialized view once into a plan: plain data an executor runs
 * (DuckDB here, Spark later), holding the SQL text of each step and the structure it needs. The state
 * signatures in it are the ones Ebb already wrote into kept states, so those states keep matching.
 */

describe("flow and view plans", () => {
  let parser: SqlReferenceParser;
  let pipeline: ValidatedPipeline;
  beforeAll(async () => {
    parser = await SqlReferenceParser.open();
    pipeline = await validatePipeline(definition, parser, tablePropertiesError);
  });
  afterAll(() => parser.close());

  const flow = (name: string) => pipeline.plans.flows.get(name)!;
  const view = (name: string) => pipeline.plans.views.get(name)!;

  it("compiles one plan per flow and per materialized view, as plain JSON-able data", () => {
    expect(Object.fromEntries([...pipeline.plans.flows].map(([name, plan]) => [name, plan.kind]))).toEqual({
      ingest_views: "plain",
      ingest_clicks: "dedup",
      windows: "windowed",
      attribute: "join",
      customer_changes: "auto_cdc",
    });
    expect(Object.fromEntries([...pipeline.plans.views].map(([name, plan]) => [name, plan.kind]))).toEqual({
      page_totals: "incremental",
      top_pages: "recompute",
    });
    for (const plan of [...pipeline.plans.flows.values(), ...pipeline.plans.views.values()])
      expect(JSON.parse(JSON.stringify(plan))).toEqual(plan);
  });

  it("gives a windowed flow its window, keys, aggregates and the partial and final SQL", () => {
    const plan = flow("windows");
    if (plan.kind !== "windowed") throw new Error(plan.kind);
    expect(plan.window).toEqual({ column: "event_time", sizeMicros: 600_000_000, slideMicros: 300_000_000 });
    expect(plan.watermark).toEqual({ column: "event_time", delay: "5 minutes", delayMicros: 300_000_000 });
    expect(plan.groupKeys).toEqual(["page"]);
    expect(plan.aggregates).toEqual([
      { kind: "count", sql: "count_star()" },
      { kind: "count_distinct", sql: "count(DISTINCT user_id)" },
      { kind: "avg", sql: "avg(load_ms)" },
    ]);
    expect(plan.partialSql).toContain(`FROM ${WINDOW_ROWS}`);
    expect(plan.finalSql).toContain(`FROM ${WINDOW_FINAL}`);
    // An unaliased aggregate keeps the name DuckDB gives it in the user's query.
    expect(plan.finalSql).toContain('AS "count_star()"');
  });

  it("gives a join its type, range, condition and the SQL of pairs and matches", () => {
    const plan = flow("attribute");
    if (plan.kind !== "join") throw new Error(plan.kind);
    expect(plan).toMatchObject({
      type: "left",
      stream: "views",
      leftAlias: "c",
      rightAlias: "v",
      range: { loMicros: 0, hiMicros: 3_600_000_000 },
      leftWatermark: { column: "click_time", delayMicros: 600_000_000 },
      rightWatermark: { column: "event_time", delayMicros: 1_200_000_000 },
    });
    expect(plan.condition).toMatch(/c\.page_id = v\.page_id/);
    expect(plan.innerSql).toMatch(/ INNER JOIN "views" AS v /);
    expect(plan.matchSql).toMatch(/^SELECT c.__ebb_seq, c.__ebb_row FROM "source" AS c INNER JOIN/);
  });

  it("gives dedup and AUTO CDC flows their keys, watermark and sequence columns", () => {
    expect(flow("ingest_clicks")).toMatchObject({
      dedup: { keys: ["click_id"], withinWatermark: true },
      watermark: { column: "click_time" },
    });
    expect(flow("customer_changes")).toMatchObject({
      keys: ["id"],
      sequenceBy: ["seq"],
      applyAsDeletes: "op = 'D'",
      scdType: 1,
    });
  });

  it("reads a view's input by its bare name and says why another view is recomputed", () => {
    const plan = view("page_totals");
    if (plan.kind !== "incremental") throw new Error(plan.kind);
    expect(plan.input).toBe("views");
    expect(plan.sql).not.toMatch(/web\.shop\./);
    expect(plan.finalSql).toContain(`FROM ${VIEW_FINAL}`);
    expect(view("top_pages")).toMatchObject({ reason: "the query is not a GROUP BY" });
  });

  it("keeps the state signatures kept states were written under", () => {
    const signature = (plan: unknown) => (plan as { stateSignature: string }).stateSignature;
    expect(signature(flow("windows"))).toBe(legacy.window);
    expect(signature(flow("attribute"))).toBe(legacy.join);
    expect(signature(view("page_totals"))).toBe(legacy.view);
  });
});

describe("the engine executes plans", () => {
  it("imports none of the pipeline's SQL analysis: validation compiled it into the plans", async () => {
    const root = path.resolve(import.meta.dirname, "../../../shared/engine");
    const analysis =
      /pipeline\/(stream-aggregation|stream-join|view-aggregation|sql-references|expression-text)\.ts/;
    const files = (await readdir(root, { recursive: true })).filter((file) => file.endsWith(".ts"));
    const importing: string[] = [];
    for (const file of files) {
      const text = await readFile(path.join(root, file), "utf8");
      if (text.split("\n").some((line) => /^\s*(import|export) .* from /.test(line) && analysis.test(line)))
        importing.push(file);
    }
    expect(importing).toEqual([]);
  });
});
