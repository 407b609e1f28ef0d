import { describe, expect, it } from "vitest";
import { captureRewindPoint } from "../../../shared/rewind/rewind-points.ts";
import { RewindHarness } from "../../support/rewind/rewind-harness.ts";

/**
 * A filter change after a rewind into an open window (issue 33): allowed (the window state fits, as
 * in Spark), but the open window then mixes rows filtered the old way before the point with rows
 * filtered the new way after it. The rewind's dry run, the edit's validate_only and the replay say
 * which flow's state was built under another definition, with the way out.
 */

const windowed = (h: RewindHarness, filter = "") => ({
  name: "Windows",
  catalog: "main",
  schema: "shop",
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
            path: h.landingUri,
            format: "json",
            schema: { k: "VARCHAR", x: "BIGINT", ts: "TIMESTAMP" },
          },
          watermark: { column: "ts", delay: "5 minutes" },
          options: { max_files_per_batch: 1 },
          sql: `SELECT window.start AS start, k, count(*) AS n FROM source ${filter} GROUP BY window(ts, '10 minutes'), k`,
        },
      ],
    },
  ],
});

const lines = (rows: object[]) => rows.map((row) => JSON.stringify(row)).join("\n") + "\n";

const driftWarnings = async (h: RewindHarness, updateId: string) =>
  (await h.eventsOf("warning")).filter(
    (e) =>
      e.origin.update_id === updateId &&
      e.details["warning"] !== undefined &&
      (e.details["warning"] as Record<string, unknown>)["state_definition_drift"] !== undefined,
  );

describe("a definition change over restored state", () => {
  it("is said by the rewind's dry run, validate_only and the replay, naming the flow and the way out", async () => {
    const h = new RewindHarness();
    await h.deploy(windowed(h));
    await h.land("1.json", lines([{ k: "a", x: 1, ts: "2026-01-01 12:01:00" }]));
    await h.run();
    // The 12:00 window is open at the point.
    const point = (await captureRewindPoint(h.env()))!;
    await h.land("2.json", lines([{ k: "a", x: 5, ts: "2026-01-01 12:03:00" }]));
    await h.run();

    // The same definition: nothing to say.
    const same = await h.rewind({ rewind_point_id: point.rewindPointId, dry_run: true });
    expect(await driftWarnings(h, same.updateId)).toEqual([]);

    await h.deploy(windowed(h, "WHERE x > 1"));
    const dry = await h.rewind({ rewind_point_id: point.rewindPointId, dry_run: true });
    const [warning] = await driftWarnings(h, dry.updateId);
    expect(warning!.message).toMatch(
      /^flow per_window continues the open windows of its checkpoint 1, built under another definition of its query: .*rewind to before those windows opened, or fully refresh the flow's dataset$/,
    );
    const [planning] = (await h.eventsOf("planning_information")).filter(
      (e) => e.origin.update_id === dry.updateId,
    );
    expect(planning!.details["planning_information"]).toMatchObject({
      state_definition_drift: [{ flow: "per_window", checkpoint_seq: 1, state: ["open windows"] }],
    });

    await h.rewind({ rewind_point_id: point.rewindPointId });
    const validated = await h.start({ validate_only: true });
    expect(validated.state).toBe("COMPLETED");
    expect((await driftWarnings(h, validated.updateId)).map((e) => e.origin.flow_name)).toEqual([
      "per_window",
    ]);
    const replay = await h.run();
    expect((await driftWarnings(h, replay.updateId)).map((e) => e.origin.flow_name)).toEqual(["per_window"]);
    // Once the replay's batches ran under the new definition, a run has nothing more to say.
    const next = await h.run();
    expect(await driftWarnings(h, next.updateId)).toEqual([]);
  });
});
