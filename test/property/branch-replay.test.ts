import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { parseWith } from "../../shared/api/request-body.ts";
import { startUpdateBody } from "../../shared/api/request-schemas.ts";
import { startUpdateOrBranch } from "../../shared/control/branches/branch-request.ts";
import { publishBranch } from "../../shared/control/branches/publish-branch.ts";
import { listRewindPoints } from "../../shared/rewind/rewind-points.ts";
import { RewindHarness } from "../support/rewind/rewind-harness.ts";

/**
 * Branch replay + publish is a rewind + replay (docs/branches.md "Replay on a branch"): random small
 * pipelines (an ingesting streaming table, maybe a stream of it downstream), random runs before a
 * point, then a bad deploy and random runs after it. One copy makes a branch at the point, deploys the
 * fix, runs it on the branch and publishes; the other rewinds to the point, deploys the fix and runs
 * it. Both end with equal tables, through the real engine and the control-plane steps on memory stores.
 *
 * RUNS sets the number of runs (default 12: each is two pipelines' worth of updates).
 */

interface Scenario {
  /** Rows per file of each run before the point (a run may read no file). */
  readonly before: readonly (readonly number[])[];
  readonly after: readonly (readonly number[])[];
  /** Files landing after the fix is deployed, before its replay. */
  readonly late: readonly number[];
  /** Files landing after the publish (or the replay on live): live's next run reads only them. */
  readonly next: readonly number[];
  readonly badFactor: number;
  readonly downstream: boolean;
  readonly threshold: number;
}

const files = fc.array(fc.integer({ min: 1, max: 3 }), { maxLength: 2 });
const scenario: fc.Arbitrary<Scenario> = fc.record({
  before: fc.array(files, { minLength: 1, maxLength: 3 }),
  after: fc.array(files, { minLength: 1, maxLength: 3 }),
  late: files,
  next: files,
  badFactor: fc.integer({ min: 2, max: 5 }),
  downstream: fc.boolean(),
  threshold: fc.integer({ min: 0, max: 20 }),
});

function definition(h: RewindHarness, s: Scenario, factor: number) {
  return {
    name: "Branch property",
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
            source: { type: "auto_loader", path: h.landingUri, format: "json", schema: { id: "BIGINT" } },
            sql: `SELECT id, id * ${factor} AS val FROM source`,
          },
        ],
      },
      ...(s.downstream
        ? [
            {
              name: "big",
              type: "streaming_table",
              flows: [
                {
                  name: "pick",
                  source: { type: "stream", dataset: "raw" },
                  sql: `SELECT id, val FROM source WHERE val >= ${s.threshold}`,
                },
              ],
            },
          ]
        : []),
    ],
  };
}

/** The same files and updates on both copies, up to the branch or the rewind. */
async function badDeploy(
  h: RewindHarness,
  s: Scenario,
): Promise<{ point: string; land: (rows: readonly number[]) => Promise<void> }> {
  let next = 1;
  let file = 0;
  const land = async (rows: readonly number[]) => {
    for (const count of rows) {
      const ids = Array.from({ length: count }, () => next++);
      await h.land(`f${String(file++).padStart(3, "0")}.json`, ids.map((id) => `{"id":${id}}\n`).join(""));
    }
  };
  await h.deploy(definition(h, s, 1));
  for (const rows of s.before) {
    await land(rows);
    await h.run();
  }
  const [point] = await listRewindPoints(h.env());
  await h.deploy(definition(h, s, s.badFactor));
  for (const rows of s.after) {
    await land(rows);
    await h.run();
  }
  await land(s.late);
  return { point: point!.rewindPointId, land };
}

async function start(h: RewindHarness, body: Record<string, unknown>) {
  return startUpdateOrBranch(h.plane, h.pipelineId, parseWith(startUpdateBody, body));
}

async function settled(h: RewindHarness, updateId: string, what: string) {
  const update = await h.executions.settled(updateId);
  if (update.state !== "COMPLETED") throw update.error ?? new Error(`${what} ${update.state}`);
}

async function tables(h: RewindHarness, s: Scenario) {
  const rows = async (dataset: string) =>
    (await h.rows(dataset)).map((r) => [Number(r["id"]), Number(r["val"])]).sort((a, b) => a[0]! - b[0]!);
  return { raw: await rows("raw"), ...(s.downstream ? { big: await rows("big") } : {}) };
}

async function branchThenPublish(s: Scenario) {
  const h = new RewindHarness();
  const { point, land } = await badDeploy(h, s);
  await start(h, { rewind_spec: { rewind_point_id: point, branch: "fix" } });
  await h.deploy(definition(h, s, 1));
  const { update_id } = (await start(h, { branch: "fix" })) as { update_id: string };
  await settled(h, update_id, "branch replay");
  // Listeners know the pipeline by live's id, the branch's update as one of its updates.
  const announced = h.published.filter((e) => e.detail.update_id === update_id);
  expect(announced.length).toBeGreaterThan(0);
  expect(new Set(announced.map((e) => e.detail.pipeline_id))).toEqual(new Set([h.pipelineId]));
  const published = await publishBranch(h.plane, h.pipelineId, "fix");
  await settled(h, published.update_id, "publish");
  // Live goes on from the branch's checkpoints: it reads only what lands after the publish.
  await land(s.next);
  await h.run();
  return tables(h, s);
}

async function rewindThenReplay(s: Scenario) {
  const h = new RewindHarness();
  const { point, land } = await badDeploy(h, s);
  await h.rewind({ rewind_point_id: point });
  await h.deploy(definition(h, s, 1));
  await h.run();
  await land(s.next);
  await h.run();
  return tables(h, s);
}

describe("branch replay + publish = rewind + replay", () => {
  it("gives equal tables for random pipelines and bad deploys", async () => {
    await fc.assert(
      fc.asyncProperty(scenario, async (s) => {
        expect(await branchThenPublish(s)).toEqual(await rewindThenReplay(s));
      }),
      { numRuns: Number(process.env["RUNS"] ?? 12), endOnFailure: true },
    );
  });
});
