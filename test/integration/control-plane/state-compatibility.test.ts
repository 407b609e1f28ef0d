import { mkdir } from "node:fs/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestControlPlane, type TestControlPlane } from "../../support/control-plane.ts";

/**
 * A definition whose operators no longer match the operator state it would continue from is refused
 * up front through the HTTP API (semantics.md "Replay"): at validate_only and at start (from HEAD), at
 * a rewind's dry run and at the rewind itself (from the checkpoint the point restores), with
 * `INCOMPATIBLE_STATE` (409), the way out in the message, and no update recorded. The ways out work:
 * a reset of the flow's checkpoint, and a rewind to a point whose state the new operators wrote.
 */

const WINDOW =
  "SELECT window.start AS start, k, count(*) AS n FROM source GROUP BY window(ts, '10 minutes'), k";

interface Case {
  readonly name: string;
  readonly before: Record<string, unknown>;
  readonly after: Record<string, unknown>;
  /** What the refusal says the stored state holds, then what the definition needs. */
  readonly message: RegExp;
}

const windowed = (sql: string) => ({ watermark: { column: "ts", delay: "5 minutes" }, sql });
const dedup = (keys: string[], column = "ts") => ({
  watermark: { column, delay: "5 minutes" },
  drop_duplicates: { keys },
  sql: "SELECT k, v, ts FROM source",
});

const CASES: readonly Case[] = [
  {
    name: "a changed window",
    before: windowed(WINDOW),
    after: windowed(WINDOW.replace("'10 minutes'", "'15 minutes'")),
    message: /window state holds windows of 10 minutes on ts.*needs windows of 15 minutes on ts/,
  },
  {
    name: "changed grouping keys",
    before: windowed(WINDOW),
    after: windowed(`${WINDOW}, v`),
    message: /window state holds grouping keys k, but the definition needs grouping keys k, v;/,
  },
  {
    name: "a changed aggregate, named as the SQL writes it",
    before: windowed(WINDOW),
    after: windowed(WINDOW.replace("count(*) AS n", "sum(v*2) FILTER (WHERE k <> 'x') AS n")),
    message:
      /window state holds aggregates count\(\*\), but the definition needs aggregates sum\(v \* 2\) FILTER \(WHERE k <> 'x'\);/,
  },
  {
    name: "a changed watermark column",
    before: dedup(["k"]),
    after: dedup(["k"], "ts2"),
    message: /a watermark on ts, but the definition needs .*a watermark on ts2/,
  },
  {
    name: "changed dedup keys",
    before: dedup(["k"]),
    after: dedup(["k", "v"]),
    message: /deduplication by \(k\).*needs deduplication by \(k, v\)/,
  },
];

const definition = (landing: string, flow: Record<string, unknown>) => ({
  datasets: [
    {
      type: "streaming_table",
      name: "out",
      flows: [
        {
          name: "stateful",
          source: {
            type: "auto_loader",
            path: landing,
            format: "json",
            schema: { k: "VARCHAR", v: "BIGINT", ts: "TIMESTAMP", ts2: "TIMESTAMP" },
          },
          ...flow,
        },
      ],
    },
  ],
});

describe("operator state compatibility, refused up front", () => {
  let cp: TestControlPlane;
  let seq = 0;

  beforeAll(async () => {
    cp = await startTestControlPlane();
  });
  afterAll(() => cp?.close());

  const run = async (pipelineId: string, body?: unknown) => {
    const { update_id } = await cp.client.startUpdate(pipelineId, body);
    return cp.client.waitForUpdate(pipelineId, update_id, { intervalMs: 200 });
  };
  const refusal = (promise: Promise<unknown>) =>
    promise.then(
      () => undefined,
      (error: unknown) => error as Error & { status: number; errorCode: string },
    );

  it.each(CASES.map((c, i) => [c.name, c, i] as const))(
    "%s: refused at validate_only, start, dry run and rewind; a checkpoint reset or another point is the way out",
    async (_, c, i) => {
      const name = `compat${i}`;
      const landing = `${cp.landing}/${name}`;
      await mkdir(landing, { recursive: true });
      const { pipeline_id: pipelineId } = await cp.client.createPipeline({
        name,
        catalog: "compat",
        schema: name,
        configuration: { "pipelines.rewind.enabled": "true" },
        definition: definition(landing, c.before),
      });
      await cp.land(`${name}/${String(++seq).padStart(3, "0")}.json`, [
        { k: "a", v: 1, ts: "2026-01-01 12:01:00", ts2: "2026-01-01 12:01:00" },
        { k: "b", v: 2, ts: "2026-01-01 12:02:00", ts2: "2026-01-01 12:02:00" },
      ]);
      const first = await run(pipelineId);
      expect(first.state, first.error?.message).toBe("COMPLETED");
      const withState = (await cp.client.rewindPoints(pipelineId)).rewind_points[0]!.rewind_point_id;

      await cp.client.editPipeline(pipelineId, { definition: definition(landing, c.after) });
      const updates = (await cp.client.listUpdates(pipelineId)).updates.length;
      for (const body of [
        { validate_only: true },
        {},
        { rewind_spec: { rewind_point_id: withState, dry_run: true } },
        { rewind_spec: { rewind_point_id: withState } },
      ]) {
        const refused = await refusal(cp.client.startUpdate(pipelineId, body));
        expect(refused, JSON.stringify(body)).toMatchObject({ status: 409, errorCode: "INCOMPATIBLE_STATE" });
        expect(refused!.message).toMatch(c.message);
        expect(refused!.message).toMatch(
          /rewind to a point taken before.*reset_checkpoint_selection.*fully refresh/,
        );
      }
      expect((await cp.client.listUpdates(pipelineId)).updates.length).toBe(updates);

      // A fresh checkpoint for the flow: the new operators start from an empty state and write their own.
      const reset = await run(pipelineId, { reset_checkpoint_selection: ["stateful"] });
      expect(reset.state, reset.error?.message).toBe("COMPLETED");
      expect((await run(pipelineId, { validate_only: true })).state).toBe("COMPLETED");
      // Rewinding elsewhere: a point whose state the new operators wrote is fine, the old one is not.
      const newState = (await cp.client.rewindPoints(pipelineId)).rewind_points[0]!.rewind_point_id;
      const dry = await run(pipelineId, { rewind_spec: { rewind_point_id: newState, dry_run: true } });
      expect(dry.state, dry.error?.message).toBe("COMPLETED");
      const old = await refusal(
        cp.client.startUpdate(pipelineId, { rewind_spec: { rewind_point_id: withState, dry_run: true } }),
      );
      expect(old).toMatchObject({ status: 409, errorCode: "INCOMPATIBLE_STATE" });
    },
  );
});
