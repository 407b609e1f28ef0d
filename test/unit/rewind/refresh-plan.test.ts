import { beforeAll, describe, expect, it } from "vitest";
import type { ValidatedPipeline } from "../../../shared/pipeline/validate-pipeline.ts";
import { UnknownSelectionError } from "../../../shared/pipeline/errors.ts";
import { planRefresh } from "../../../shared/rewind/refresh-plan.ts";
import { parseRefreshRequest } from "../../../shared/rewind/refresh-request.ts";
import { rewindPipeline } from "./fixtures.ts";
import { InvalidParameterError } from "../../../shared/errors/coded-error.ts";

let pipeline: ValidatedPipeline;
beforeAll(async () => {
  pipeline = await rewindPipeline();
});

const plan = (input: Record<string, unknown>) => planRefresh(pipeline, parseRefreshRequest(input));

describe("planRefresh", () => {
  it("INCREMENTAL resets nothing and runs everything", () => {
    const result = plan({});
    expect(result.mode).toBe("INCREMENTAL");
    expect(result.resets).toEqual([]);
    expect(result.run).toEqual(["raw", "clean", "events", "totals", "enriched", "recent"]);
  });

  it("FULL resets every table by its own reset_mode, puts every flow at the root, and runs everything", () => {
    const result = plan({ full_refresh: true });
    expect(result.resets).toEqual([
      { dataset: "raw", reset: { how: "DROP" }, flows: ["ingest"] },
      { dataset: "clean", reset: { how: "TRUNCATE" }, flows: ["cleanse"] },
      { dataset: "events", reset: { how: "DROP" }, flows: ["eu_events", "us_events"] },
      { dataset: "totals", reset: { how: "DROP" }, flows: [] },
      { dataset: "enriched", reset: { how: "DROP" }, flows: ["enrich"] },
      { dataset: "recent", reset: { how: "NONE" }, flows: [] },
    ]);
    expect(result.run).toHaveLength(6);
    expect(result.warnings).toEqual([]);
  });

  it("RESET resets the selection and runs nothing", () => {
    const result = plan({ refresh: "RESET", selection: ["totals"] });
    expect(result.mode).toBe("RESET");
    expect(result.resets).toEqual([{ dataset: "totals", reset: { how: "DROP" }, flows: [] }]);
    expect(result.run).toEqual([]);
  });

  it("a reset_mode override replaces each dataset's own mode", () => {
    const result = plan({ refresh: "FULL", selection: ["clean", "raw"], reset_mode: "DROP" });
    expect(result.resets.map((r) => [r.dataset, r.reset.how])).toEqual([
      ["raw", "DROP"],
      ["clean", "DROP"],
    ]);
    expect(result.run).toEqual(["raw", "clean"]);
  });

  it("TRUNCATE as an override falls back to DROP on a view, with a warning", () => {
    const result = plan({ refresh: "RESET", selection: ["recent", "totals"], reset_mode: "TRUNCATE" });
    expect(result.resets).toEqual([
      { dataset: "totals", reset: { how: "TRUNCATE" }, flows: [] },
      { dataset: "recent", reset: { how: "NONE" }, flows: [] },
    ]);
    expect(result.warnings).toEqual([
      expect.stringMatching(/TRUNCATE does not apply to the view recent.*falls back to DROP/),
    ]);
  });

  it("FULL of one writer of a shared sink deletes only its own rows and resets only its checkpoint", () => {
    const result = plan({ full_refresh_selection: ["eu_events"] });
    expect(result.resets).toEqual([
      {
        dataset: "events",
        reset: { how: "OWNED_ROWS", predicates: [{ flow: "eu_events", owns: "region = 'eu'" }] },
        flows: ["eu_events"],
      },
    ]);
    expect(result.run).toEqual(["events"]);
    expect(result.runFlows).toEqual(["eu_events"]);
  });

  it("RESET of one writer deletes only its rows; RESET with an override resets the whole shared table", () => {
    expect(plan({ refresh: "RESET", selection: ["us_events"] }).resets).toEqual([
      {
        dataset: "events",
        reset: { how: "OWNED_ROWS", predicates: [{ flow: "us_events", owns: "region = 'us'" }] },
        flows: ["us_events"],
      },
    ]);
    expect(plan({ refresh: "RESET", selection: ["us_events"], reset_mode: "TRUNCATE" }).resets).toEqual([
      { dataset: "events", reset: { how: "TRUNCATE" }, flows: ["eu_events", "us_events"] },
    ]);
  });

  it("refuses FULL of one shared-sink writer with an override: a full refresh never deletes other writers' rows", () => {
    const run = () => plan({ refresh: "FULL", selection: ["eu_events"], reset_mode: "DROP" });
    expect(run).toThrow(InvalidParameterError);
    expect(run).toThrow(/never deletes other writers' rows/);
  });

  it("selecting every writer of a table by flow name resets the table as a whole", () => {
    expect(plan({ refresh: "FULL", selection: ["eu_events", "us_events"] }).resets).toEqual([
      { dataset: "events", reset: { how: "DROP" }, flows: ["eu_events", "us_events"] },
    ]);
  });

  it("warns about a streaming reader of a reset dataset that is not reset with it", () => {
    const result = plan({ full_refresh_selection: ["clean"] });
    expect(result.warnings).toEqual([
      expect.stringMatching(/enriched reads clean as a stream.*fully refresh enriched too/),
    ]);
    expect(plan({ full_refresh_selection: ["clean", "enriched"] }).warnings).toEqual([]);
  });

  it("checkpoint resets keep tables and warn for an append flow without a starting option", () => {
    const result = plan({ reset_checkpoint_selection: ["cleanse", "enrich"] });
    expect(result.resets).toEqual([]);
    expect(result.checkpointResets).toEqual([
      { flow: "cleanse", dataset: "clean" },
      { flow: "enrich", dataset: "enriched" },
    ]);
    expect(result.warnings).toEqual([expect.stringMatching(/flow cleanse .* writes those rows again/)]);
    expect(result.run).toHaveLength(6);
  });

  it("refresh_selection runs only the datasets named", () => {
    expect(plan({ refresh_selection: ["TOTALS"] }).run).toEqual(["totals"]);
  });

  it("names unknown datasets or flows in a selection, and the field that sent them", () => {
    expect(() => plan({ refresh: "FULL", selection: ["nope"] })).toThrow(UnknownSelectionError);
    for (const [input, field] of [
      [{ refresh: "FULL", selection: ["nope"] }, "selection"],
      [{ selection: ["nope"] }, "selection"],
      [{ full_refresh_selection: ["nope"] }, "full_refresh_selection"],
      [{ full_refresh_selection: ["totals"], refresh_selection: ["nope"] }, "refresh_selection"],
      [{ refresh_selection: ["nope"] }, "refresh_selection"],
      [{ reset_checkpoint_selection: ["nope"] }, "reset_checkpoint_selection"],
    ] as const)
      expect(() => plan(input)).toThrow(new RegExp(`^${field} names "nope", which is not a dataset or flow`));
  });
});
