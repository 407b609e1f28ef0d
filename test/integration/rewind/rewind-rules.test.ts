import { describe, expect, it } from "vitest";
import { loadSnapshot } from "../../../shared/delta/index.ts";
import {
  BeyondRetentionError,
  CheckpointBeyondRetentionError,
  DatasetNotInRewindPointError,
  IncompatibleRestoredStateError,
  InconsistentUpstreamCheckpointResetError,
  InvalidCascadeConfigurationError,
  RewindBeforeFullRefreshError,
  RewindNotEnabledError,
  RewindPointNotFoundError,
} from "../../../shared/rewind/errors.ts";
import { captureRewindPoint } from "../../../shared/rewind/rewind-points.ts";
import { cutAtTime } from "../../../shared/rewind/rewind-target.ts";
import type { MemoryCheckpointsRepository } from "../../../shared/store/memory-checkpoints-repository.ts";
import { ROOT_SEQ } from "../../../shared/store/checkpoints-repository.ts";
import { jsonLines, RewindHarness } from "../../support/rewind/rewind-harness.ts";
import { scenarioPipeline, withFlagged } from "./pipeline-definitions.ts";

/** Two updates with a point after the first; returns the point and the state a failed rewind must leave. */
async function pipelineWithPoint() {
  const h = new RewindHarness();
  await h.deploy(scenarioPipeline(h.landingUri));
  await h.land("a.json", jsonLines(1, 3));
  await h.run();
  const point = (await captureRewindPoint(h.env()))!;
  h.clock.advance(60_000);
  await h.land("b.json", jsonLines(4, 3));
  await h.run();
  return { h, point };
}

async function state(h: RewindHarness) {
  const versions: Record<string, number> = {};
  for (const d of ["raw", "cleaned", "totals"]) versions[d] = (await loadSnapshot(h.tableStore(d))).version;
  const heads: Record<string, number> = {};
  for (const f of ["ingest", "clean"])
    heads[f] = (await h.checkpoints.head({ pipelineId: h.pipelineId, flowId: f })).seq;
  return {
    versions,
    heads,
    block: await h.rewindBlock(),
    summaries: (await h.eventsOf("rewind_summary")).length,
  };
}

/** Runs the rewind, expects `errorClass`, and checks nothing changed and nothing is blocked. */
async function expectRefused(
  h: RewindHarness,
  spec: unknown,
  errorClass: new (...args: never[]) => Error,
  message?: RegExp,
) {
  const before = await state(h);
  const run = h.rewind(spec);
  await expect(run).rejects.toThrow(errorClass);
  if (message) await expect(run).rejects.toThrow(message);
  expect(await state(h)).toEqual(before);
  expect(await h.rewindBlock()).toEqual({ blocked: false });
}

describe("rewind rules against storage", () => {
  it("REWIND_POINT_NOT_FOUND: an unknown id, another pipeline's point, or a finished rewind's summary", async () => {
    const { h, point } = await pipelineWithPoint();
    await expectRefused(h, { rewind_point_id: "01JUNKJUNKJUNKJUNKJUNKJUNK" }, RewindPointNotFoundError);
    await expectRefused(
      h,
      { rewind_point_id: "not-an-id" },
      RewindPointNotFoundError,
      /not-an-id.*list the live points/,
    );
    const other = new RewindHarness();
    await other.deploy(scenarioPipeline(other.landingUri));
    await expect(other.rewind({ rewind_point_id: point.rewindPointId })).rejects.toThrow(
      RewindPointNotFoundError,
    );
    const result = await h.rewind({ rewind_point_id: point.rewindPointId });
    await expectRefused(h, { rewind_point_id: result.summaryEventId }, RewindPointNotFoundError);
  });

  it("refuses a rewind of a pipeline that does not have rewind enabled", async () => {
    const h = new RewindHarness();
    await h.deploy(scenarioPipeline(h.landingUri, undefined, { "pipelines.rewind.enabled": "false" }));
    await h.land("a.json", jsonLines(1, 3));
    await h.run();
    const point = (await captureRewindPoint(h.env()))!;
    await expectRefused(
      h,
      { rewind_point_id: point.rewindPointId },
      RewindNotEnabledError,
      /pipelines\.rewind\.enabled/,
    );
  });

  it("resolves a timestamp per dataset to the latest version at or before it, a commit exactly at T included", async () => {
    const { h } = await pipelineWithPoint();
    const store = h.tableStore("cleaned");
    const latest = await loadSnapshot(store);
    const previous = await loadSnapshot(store, { version: latest.version - 1 });
    const at = (time: number) => cutAtTime(h.env(), time);
    expect((await at(latest.timestamp)).datasets.get("cleaned")!.version).toBe(latest.version);
    expect((await at(latest.timestamp - 1)).datasets.get("cleaned")!.version).toBe(previous.version);
    expect((await at(previous.timestamp)).datasets.get("cleaned")!.version).toBe(previous.version);
    expect((await at(latest.timestamp)).flows).toEqual(
      new Map([
        ["ingest", 2],
        ["clean", 2],
      ]),
    );
    // Between raw's second commit and cleaned's: the causal cut has raw's batch but not cleaned's.
    expect((await at(latest.timestamp - 1)).flows).toEqual(
      new Map([
        ["ingest", 2],
        ["clean", 1],
      ]),
    );
    expect((await at(previous.timestamp)).flows).toEqual(
      new Map([
        ["ingest", 1],
        ["clean", 1],
      ]),
    );
  });

  it("resolves a timestamp after a rewind to the rewound state, not to the abandoned timeline's newer checkpoints", async () => {
    const { h, point } = await pipelineWithPoint();
    await h.rewind({ rewind_point_id: point.rewindPointId });
    h.clock.advance(60_000);
    const after = h.clock.now();
    const cut = await cutAtTime(h.env(), after);
    expect(cut.flows).toEqual(point.cut.flows);
    // The checkpoint repository's own time lookup would name the abandoned batch.
    const abandoned = await h.checkpoints.latestCommittedAtOrBefore(
      { pipelineId: h.pipelineId, flowId: "clean" },
      after,
    );
    expect(abandoned!.seq).toBe(2);
    expect(cut.flows.get("clean")).toBe(1);
  });

  it("BEYOND_RETENTION: a timestamp older than the rewind retention", async () => {
    const { h } = await pipelineWithPoint();
    h.clock.advance(8 * 86_400_000);
    const old = new Date(h.clock.peek() - 7 * 86_400_000 - 60_000).toISOString().replace(/\.\d{3}Z$/, "Z");
    await expectRefused(
      h,
      { rewind_timestamp: old },
      BeyondRetentionError,
      /older than the pipeline's rewind retention of 1 week/,
    );
  });

  it("BEYOND_RETENTION: a data file of the target version was vacuumed, named in the error", async () => {
    const { h, point } = await pipelineWithPoint();
    // The materialized view's files at the point were replaced by the next update: VACUUM could take them.
    const totals = h.tableStore("totals");
    const target = await loadSnapshot(totals, { version: point.cut.datasets.get("totals")!.version });
    const [file] = [...target.files.keys()];
    await totals.delete(file!);
    await expectRefused(
      h,
      { rewind_point_id: point.rewindPointId },
      BeyondRetentionError,
      new RegExp(`totals: data file ${file}`),
    );
  });

  it("BEYOND_RETENTION: a source file to be replayed is gone", async () => {
    const { h, point } = await pipelineWithPoint();
    await h.locate(h.landingUri).delete("b.json");
    await expectRefused(
      h,
      { rewind_point_id: point.rewindPointId },
      BeyondRetentionError,
      /ingest: source file b\.json/,
    );
  });

  it("CHECKPOINT_BEYOND_RETENTION: the target checkpoint or its state file is gone", async () => {
    const { h, point } = await pipelineWithPoint();
    const ingest = { pipelineId: h.pipelineId, flowId: "ingest" };
    const checkpoint = (await h.checkpoints.get(ingest, point.cut.flows.get("ingest")!))!;
    const offsets = checkpoint.offsets as { changelogs: string[] };
    // The checkpoint's state ref is this changelog too: the file is still named once.
    expect(checkpoint.stateRef).toBe(offsets.changelogs[0]);
    await h.store.delete(offsets.changelogs[0]!);
    await expectRefused(
      h,
      { rewind_point_id: point.rewindPointId },
      CheckpointBeyondRetentionError,
      /ingest: state file state\//,
    );
    const refusal = await h.rewind({ rewind_point_id: point.rewindPointId }).catch((e: unknown) => e);
    expect((refusal as CheckpointBeyondRetentionError).missing).toEqual([
      { owner: "ingest", what: `state file ${offsets.changelogs[0]} of checkpoint 1 is gone` },
    ]);
    expect((refusal as Error).message.split(`state file ${offsets.changelogs[0]}`)).toHaveLength(2);
    (h.checkpoints as MemoryCheckpointsRepository).forget(
      { pipelineId: h.pipelineId, flowId: "clean" },
      point.cut.flows.get("clean")!,
    );
    await expectRefused(
      h,
      { rewind_point_id: point.rewindPointId },
      CheckpointBeyondRetentionError,
      /clean: checkpoint 1 is gone/,
    );
  });

  it("a dataset added after the point is emptied with the rest, or left out", async () => {
    const { h, point } = await pipelineWithPoint();
    const definition = scenarioPipeline(h.landingUri);
    definition.datasets.push({ name: "eu_totals", type: "materialized_view", sql: "SELECT * FROM totals" });
    await h.deploy(definition);
    await h.run();
    const dry = await h.rewind({ rewind_point_id: point.rewindPointId, dry_run: true });
    expect(dry.datasets.map((d) => [d.dataset, d.action])).toEqual([
      ["raw", "RESTORE"],
      ["cleaned", "RESTORE"],
      ["totals", "RESTORE"],
      ["eu_totals", "TRUNCATE"],
    ]);
    const plan = await h.rewind({
      rewind_point_id: point.rewindPointId,
      datasets: [
        { identifier: "main.shop.raw", cascade: false },
        { identifier: "main.shop.cleaned", cascade: false },
        { identifier: "main.shop.totals", cascade: false },
      ],
    });
    expect(plan.datasets.map((d) => d.dataset)).toEqual(["raw", "cleaned", "totals"]);
  });

  it("INVALID_CASCADE_CONFIGURATION: rewinding raw alone while cleaned has consumed past the point", async () => {
    const { h, point } = await pipelineWithPoint();
    await expectRefused(
      h,
      { rewind_point_id: point.rewindPointId, datasets: [{ identifier: "main.shop.raw", cascade: false }] },
      InvalidCascadeConfigurationError,
      /main\.shop\.cleaned \(reads main\.shop\.raw\)/,
    );
    const plan = await h.rewind({
      rewind_point_id: point.rewindPointId,
      datasets: [{ identifier: "main.shop.raw", cascade: true }],
    });
    expect(plan.datasets.map((d) => d.dataset)).toEqual(["raw", "cleaned", "totals"]);
  });

  it("INVALID_CASCADE_CONFIGURATION and INCONSISTENT_UPSTREAM_CHECKPOINT_RESET name the datasets list that works", async () => {
    const h = new RewindHarness();
    await h.deploy(withFlagged(scenarioPipeline(h.landingUri)));
    await h.land("a.json", jsonLines(1, 3));
    await h.run();
    const point = (await captureRewindPoint(h.env()))!;
    await h.land("b.json", jsonLines(4, 3));
    await h.run();
    const refusal = async (datasets: unknown[]) =>
      (await h
        .rewind({ rewind_point_id: point.rewindPointId, dry_run: true, datasets })
        .catch((error: unknown) => error)) as
        InvalidCascadeConfigurationError | InconsistentUpstreamCheckpointResetError;
    const cases = [
      {
        // flagged inherits reset_checkpoints: false through the cascade: cascade is already on.
        sent: [{ identifier: "main.shop.cleaned", cascade: true, reset_checkpoints: false }],
        error: InvalidCascadeConfigurationError,
        message: /keeps the checkpoints of main\.shop\.flagged \(reads main\.shop\.cleaned\)/,
        working: [{ identifier: "main.shop.cleaned", cascade: true, reset_checkpoints: true }],
      },
      {
        sent: [{ identifier: "main.shop.raw", cascade: false }],
        error: InvalidCascadeConfigurationError,
        message: /leaves out main\.shop\.cleaned \(reads main\.shop\.raw\)/,
        working: [
          { identifier: "main.shop.raw", cascade: false, reset_checkpoints: true },
          { identifier: "main.shop.cleaned", cascade: true, reset_checkpoints: true },
        ],
      },
      {
        // Adding the reader with reset_checkpoints: true, as the old advice said, disagrees with cleaned.
        sent: [
          { identifier: "main.shop.cleaned", cascade: false, reset_checkpoints: false },
          { identifier: "main.shop.flagged", cascade: true, reset_checkpoints: true },
        ],
        error: InconsistentUpstreamCheckpointResetError,
        message: /main\.shop\.flagged and its upstream main\.shop\.cleaned/,
        working: [
          { identifier: "main.shop.cleaned", cascade: false, reset_checkpoints: true },
          { identifier: "main.shop.flagged", cascade: true, reset_checkpoints: true },
        ],
      },
    ];
    for (const { sent, error, message, working } of cases) {
      const refused = await refusal(sent);
      expect(refused).toBeInstanceOf(error);
      expect(refused.message).toMatch(message);
      expect(refused.message).not.toMatch(/set cascade: true on the upstream/);
      expect(refused.message).toContain(`send rewind_spec.datasets = ${JSON.stringify(working)}`);
      // The list named works as it is.
      const dry = await h.rewind({ rewind_point_id: point.rewindPointId, dry_run: true, datasets: working });
      expect(dry.datasets.map((d) => d.dataset)).toContain("cleaned");
    }
  });

  it("REWIND_BEFORE_FULL_REFRESH: a point before a full refresh, by TRUNCATE or by DROP", async () => {
    const { h, point } = await pipelineWithPoint();
    await h.refresh({ full_refresh_selection: ["totals"] });
    await expectRefused(
      h,
      { rewind_point_id: point.rewindPointId },
      RewindBeforeFullRefreshError,
      /main\.shop\.totals/,
    );
    const later = (await captureRewindPoint(h.env()))!;
    await h.rewind({ rewind_point_id: later.rewindPointId });
  });

  it("refuses a rewind the current definition could not replay (a flow whose source kind changed)", async () => {
    const { h, point } = await pipelineWithPoint();
    const definition = scenarioPipeline(h.landingUri);
    (definition.datasets[0] as { flows: { source: unknown }[] }).flows[0]!.source = {
      type: "delta",
      path: "s3://elsewhere/table",
    };
    await h.deploy(definition);
    await expectRefused(
      h,
      { rewind_point_id: point.rewindPointId },
      IncompatibleRestoredStateError,
      /flow ingest could not replay.*file-set offset.*delta source/,
    );
  });

  it("refuses to rewind a reader whose restored offset names an upstream table dropped since", async () => {
    const { h, point } = await pipelineWithPoint();
    await h.refresh({ refresh: "RESET", selection: ["raw"], reset_mode: "DROP" });
    await h.run(["raw"]);
    await expectRefused(
      h,
      {
        rewind_point_id: point.rewindPointId,
        datasets: [{ identifier: "main.shop.cleaned", cascade: true }],
      },
      IncompatibleRestoredStateError,
      /flow clean could not replay.*raw that has been dropped and recreated since/,
    );
  });

  it("a dry run checks everything, changes nothing, and records a point that applies exactly that rewind", async () => {
    const { h } = await pipelineWithPoint();
    // The end of the first update: the materialized view's first commit.
    const totalsFirst = await loadSnapshot(h.tableStore("totals"), { version: 0 });
    const text = new Date(totalsFirst.timestamp).toISOString();
    const before = await state(h);
    const dry = await h.rewind({ rewind_timestamp: text, dry_run: true });
    expect(dry.dryRun).toBe(true);
    expect({ ...(await state(h)), summaries: before.summaries }).toEqual(before);
    const recorded = (await h.eventsOf("rewind_summary")).at(-1)!;
    expect(recorded.id).toBe(dry.summaryEventId);
    expect((recorded.details["rewind_summary"] as { dry_run: boolean }).dry_run).toBe(true);

    const plan = await h.rewind({ rewind_point_id: dry.summaryEventId });
    expect(plan.datasets.map((d) => [d.dataset, d.targetVersion])).toEqual(
      dry.datasets.map((d) => [d.dataset, d.targetVersion]),
    );
    const after = await state(h);
    expect(after.heads).toEqual({ ingest: 1, clean: 1 });
    expect(await h.rewindBlock()).toEqual({ blocked: false });
  });

  it("reset_checkpoints: false restores table data only and keeps HEAD", async () => {
    const { h, point } = await pipelineWithPoint();
    const plan = await h.rewind({
      rewind_point_id: point.rewindPointId,
      datasets: [{ identifier: "main.shop.totals", cascade: false, reset_checkpoints: false }],
    });
    expect(plan.datasets).toHaveLength(1);
    expect((await state(h)).heads).toEqual({ ingest: 2, clean: 2 });
  });

  it("records the root for a flow that had not run at the point, and empties its dataset back to it", async () => {
    const h = new RewindHarness();
    await h.deploy(scenarioPipeline(h.landingUri));
    await h.land("a.json", jsonLines(1, 3));
    await h.run(["raw"]);
    const point = (await captureRewindPoint(h.env()))!;
    await h.run();
    expect(point.cut.flows.get("clean")).toBe(ROOT_SEQ);
    const plan = await h.rewind({ rewind_point_id: point.rewindPointId });
    expect(plan.datasets.map((d) => [d.dataset, d.action, d.targetVersion])).toEqual([
      ["raw", "RESTORE", point.cut.datasets.get("raw")!.version],
      ["cleaned", "TRUNCATE", null],
      ["totals", "TRUNCATE", null],
    ]);
    expect((await state(h)).heads).toEqual({ ingest: point.cut.flows.get("ingest"), clean: ROOT_SEQ });
    expect(await h.rows("cleaned")).toEqual([]);
    await expectRefused(
      h,
      {
        rewind_point_id: point.rewindPointId,
        datasets: [{ identifier: "main.shop.cleaned", cascade: true, reset_checkpoints: false }],
      },
      DatasetNotInRewindPointError,
      /main\.shop\.cleaned did not exist at the rewind target.*set reset_checkpoints: true/,
    );
  });
});
