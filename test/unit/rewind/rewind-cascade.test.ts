import { beforeAll, describe, expect, it } from "vitest";
import type { ValidatedPipeline } from "../../../shared/pipeline/validate-pipeline.ts";
import {
  DatasetNotInRewindPointError,
  InconsistentUpstreamCheckpointResetError,
  InvalidCascadeConfigurationError,
  ResetCheckpointsRequiredError,
  RewindDatasetNotFoundError,
} from "../../../shared/rewind/errors.ts";
import { planCascade, type CascadeInput } from "../../../shared/rewind/rewind-cascade.ts";
import { rewindPipeline } from "./fixtures.ts";

let pipeline: ValidatedPipeline;
beforeAll(async () => {
  pipeline = await rewindPipeline();
});

const ALL_TABLES = new Set(["raw", "clean", "totals", "enriched", "events"]);

function cascade(overrides: Partial<CascadeInput> = {}) {
  return planCascade({ pipeline, inTarget: ALL_TABLES, consumedPast: () => true, ...overrides });
}

function spec(identifier: string, cascadeOn: boolean, reset = true) {
  return { identifier, cascade: cascadeOn, reset_checkpoints: reset };
}

describe("planCascade", () => {
  it("rewinds every table dataset with reset when datasets is omitted, upstream first, views left out", () => {
    expect(cascade()).toEqual([
      { dataset: "raw", resetCheckpoints: true, inTarget: true },
      { dataset: "clean", resetCheckpoints: true, inTarget: true },
      { dataset: "events", resetCheckpoints: true, inTarget: true },
      { dataset: "totals", resetCheckpoints: true, inTarget: true },
      { dataset: "enriched", resetCheckpoints: true, inTarget: true },
    ]);
  });

  it("cascades over the DAG from a dataset, through a view", () => {
    expect(cascade({ datasets: [spec("main.sales.clean", true)] }).map((m) => m.dataset)).toEqual([
      "clean",
      "totals",
      "enriched",
    ]);
  });

  it("accepts any letter case and the unqualified name", () => {
    expect(cascade({ datasets: [spec("Main.Sales.TOTALS", false)] }).map((m) => m.dataset)).toEqual([
      "totals",
    ]);
    expect(cascade({ datasets: [spec("totals", false)] }).map((m) => m.dataset)).toEqual(["totals"]);
  });

  it("without cascade, rewinds only the dataset when no left-out reader consumed past the target", () => {
    const members = cascade({ datasets: [spec("main.sales.clean", false)], consumedPast: () => false });
    expect(members).toEqual([{ dataset: "clean", resetCheckpoints: true, inTarget: true }]);
  });

  it("refuses an unknown dataset with DATASET_NOT_FOUND, listing the known ones", () => {
    const run = () => cascade({ datasets: [spec("main.sales.nope", true), spec("other.sales.raw", true)] });
    expect(run).toThrow(RewindDatasetNotFoundError);
    expect(run).toThrow(/"main.sales.nope", "other.sales.raw".*main\.sales\.raw/);
  });

  it("refuses a left-out streaming reader that consumed past the target with INVALID_CASCADE_CONFIGURATION, naming it", () => {
    const run = () =>
      cascade({
        datasets: [spec("main.sales.clean", false)],
        consumedPast: (flow, upstream) => flow === "enrich" && upstream === "clean",
      });
    expect(run).toThrow(InvalidCascadeConfigurationError);
    expect(run).toThrow(/main\.sales\.enriched \(reads main\.sales\.clean\)/);
  });

  it("does not count a left-out materialized view as a consuming reader (it recomputes)", () => {
    const members = cascade({
      datasets: [spec("main.sales.clean", false), spec("main.sales.enriched", false)],
      consumedPast: () => true,
    });
    expect(members.map((m) => m.dataset)).toEqual(["clean", "enriched"]);
  });

  it("refuses different reset_checkpoints on a dataset and its upstream with INCONSISTENT_UPSTREAM_CHECKPOINT_RESET", () => {
    const run = () =>
      cascade({
        datasets: [spec("main.sales.clean", false, false), spec("main.sales.enriched", false, true)],
      });
    expect(run).toThrow(InconsistentUpstreamCheckpointResetError);
    expect(run).toThrow(/main\.sales\.enriched and its upstream main\.sales\.clean/);
  });

  it("lets cascaded datasets inherit reset_checkpoints: false, which then agrees", () => {
    const members = cascade({ datasets: [spec("main.sales.clean", true, false)], consumedPast: () => false });
    expect(members.every((m) => !m.resetCheckpoints)).toBe(true);
  });

  it("refuses a reader rewound with reset_checkpoints: false that consumed past its upstream's target", () => {
    const run = () =>
      cascade({
        datasets: [spec("main.sales.clean", true, false)],
        consumedPast: (flow) => flow === "enrich",
      });
    expect(run).toThrow(InvalidCascadeConfigurationError);
    expect(run).toThrow(/keeps the checkpoints of main\.sales\.enriched \(reads main\.sales\.clean\)/);
  });

  it("refuses reset_checkpoints: false on a dataset read from an external source with RESET_CHECKPOINTS_REQUIRED", () => {
    const run = () => cascade({ datasets: [spec("main.sales.raw", true, false)] });
    expect(run).toThrow(ResetCheckpointsRequiredError);
    expect(run).toThrow(/main\.sales\.raw \(flow ingest reads auto_loader s3:\/\/landing\/raw\/\)/);
  });
});

describe("planCascade and datasets the target does not know", () => {
  it("empties a dataset with no version at the target, with the rest", () => {
    const members = cascade({ inTarget: new Set(["raw", "clean", "totals", "events"]) });
    expect(members.find((m) => m.dataset === "enriched")).toEqual({
      dataset: "enriched",
      resetCheckpoints: true,
      inTarget: false,
    });
    expect(members.filter((m) => m.inTarget).map((m) => m.dataset)).toEqual([
      "raw",
      "clean",
      "events",
      "totals",
    ]);
  });

  it("refuses to empty a streaming table whose checkpoints the spec keeps with DATASET_NOT_IN_REWIND_POINT", () => {
    const run = () =>
      cascade({
        inTarget: new Set(["raw", "clean", "totals", "events"]),
        datasets: [spec("main.sales.clean", true, false)],
        consumedPast: () => false,
      });
    expect(run).toThrow(DatasetNotInRewindPointError);
    expect(run).toThrow(
      /main\.sales\.enriched did not exist at the rewind target.*set reset_checkpoints: true/,
    );
  });
});
