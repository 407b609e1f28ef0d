import { mkdir } from "node:fs/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EXIT, runCli } from "../../../shared/cli/main.ts";
import type { FlowStateInfo } from "../../../shared/client/ebb-client.ts";
import { startTestControlPlane, type TestControlPlane } from "../../support/control-plane.ts";

/**
 * The state reader through the HTTP API and `ebb state`: a flow's operator state as rows at HEAD, at a
 * checkpoint and at a rewind point. The state read at a point is the state a rewind to it restores:
 * after the rewind HEAD reads the same version and rows, and the replay drops exactly the keys it
 * showed. Paged; unknown flows, points and checkpoints and a flow without state have their own codes.
 */

const definition = (landing: string) => ({
  datasets: [
    {
      type: "streaming_table",
      name: "clicks",
      flows: [
        {
          name: "dedup",
          source: {
            type: "auto_loader",
            path: landing,
            format: "json",
            schema: { id: BIGINT, ts: "TIMESTAMP" },
          },
          watermark: { column: "ts", delay: "1 hour" },
          drop_duplicates: { keys: ["id"] },
          // One file per batch, so the replay after a rewind cuts the same batches.
          options: { max_files_per_batch: 1 },
          sql: "SELECT id, ts FROM source",
        },
      ],
    },
    {
      type: "streaming_table",
      name: "raw",
      flows: [
        {
          name: "copy",
          source: {
            type: "auto_loader",
            path: landing,
            format: "json",
            schema: { id: BIGINT, ts: "TIMESTAMP" },
          },
          sql: "SELECT id FROM source",
        },
      ],
    },
  ],
});
const BIGINT = "BIGINT";

describe("the state reader", () => {
  let cp: TestControlPlane;
  let pipelineId: string;

  beforeAll(async () => {
    cp = await startTestControlPlane();
  });
  afterAll(() => cp?.close());

  const run = async (body?: unknown) => {
    const { update_id } = await cp.client.startUpdate(pipelineId, body);
    const update = await cp.client.waitForUpdate(pipelineId, update_id, { intervalMs: 200 });
    expect(update.state, update.error?.message).toBe("COMPLETED");
  };
  const keys = (state: FlowStateInfo) => state.rows.map((row) => row.key["id"]);
  const ids = async () =>
    (await cp.client.query("reader.clicks.clicks", { sql: "SELECT id FROM t ORDER BY id" })).rows.map(
      (r) => r["id"],
    );
  const refusal = (promise: Promise<unknown>) =>
    promise.then(
      () => undefined,
      (error: unknown) => error,
    );

  it("reads the state at HEAD, a checkpoint and a point; a rewind restores exactly what the point showed", async () => {
    const landing = `${cp.landing}/reader`;
    await mkdir(landing, { recursive: true });
    ({ pipeline_id: pipelineId } = await cp.client.createPipeline({
      name: "reader",
      catalog: "reader",
      schema: "clicks",
      configuration: { "pipelines.rewind.enabled": "true" },
      definition: definition(landing),
    }));
    await cp.land("reader/001.json", [
      { id: 2, ts: "2026-01-01 12:00:00" },
      { id: 1, ts: "2026-01-01 12:10:00" },
    ]);
    await run();
    const point = (await cp.client.rewindPoints(pipelineId)).rewind_points[0]!;
    await cp.land("reader/002.json", [
      { id: 1, ts: "2026-01-01 12:20:00" },
      { id: 3, ts: "2026-01-01 12:30:00" },
    ]);
    await cp.land("reader/003.json", [
      { id: 4, ts: "2026-01-01 13:00:00" },
      { id: 2, ts: "2026-01-01 13:05:00" },
    ]);
    await run();
    expect(await ids()).toEqual([1, 2, 3, 4]);

    const head = await cp.client.flowState(pipelineId, "dedup");
    expect(head.checkpoint_seq).toBe(3);
    expect(head.tables).toEqual([
      {
        name: "dedup",
        key_columns: [{ name: "id", type: "BIGINT" }],
        value_columns: [],
        num_rows: 4,
      },
    ]);
    expect(keys(head)).toEqual([1, 2, 3, 4]);
    expect(head.watermark).toBe("2026-01-01T12:05:00.000Z");

    // At the point: the checkpoint it names for the flow, and that checkpoint's own state.
    const seq = point.flows.find((f) => f.flow === "dedup")!.checkpoint_seq;
    const atPoint = await cp.client.flowState(pipelineId, "dedup", {
      rewind_point_id: point.rewind_point_id,
    });
    expect(atPoint).toMatchObject({ checkpoint_seq: seq, rewind_point_id: point.rewind_point_id });
    expect(keys(atPoint)).toEqual([1, 2]);
    expect(atPoint.watermark).toBe("2026-01-01T11:10:00.000Z");
    const atCheckpoint = await cp.client.flowState(pipelineId, "dedup", { checkpoint_seq: seq });
    expect({ ...atCheckpoint, rewind_point_id: point.rewind_point_id }).toEqual(atPoint);

    // Paged one row at a time, the same rows.
    const paged: unknown[] = [];
    let page = await cp.client.flowState(pipelineId, "dedup", { max_results: 1 });
    for (;;) {
      paged.push(...page.rows);
      if (!page.next_page_token) break;
      page = await cp.client.flowState(pipelineId, "dedup", {
        max_results: 1,
        page_token: page.next_page_token,
      });
    }
    expect(paged).toEqual(head.rows);

    // The rewind restores the point's state: HEAD now reads it. The replay starts from it: of the
    // later files' keys, 1 and 2 (in that state) are dropped again; 3 and 4 are not.
    await run({ rewind_spec: { rewind_point_id: point.rewind_point_id } });
    const restored = await cp.client.flowState(pipelineId, "dedup");
    expect({ ...restored, rewind_point_id: point.rewind_point_id }).toEqual(atPoint);
    expect(await ids()).toEqual([1, 2]);
    await run();
    expect(await ids()).toEqual([1, 2, 3, 4]);
    expect(keys(await cp.client.flowState(pipelineId, "dedup"))).toEqual([1, 2, 3, 4]);
    // The point's state is still there, on the timeline the replay abandoned.
    expect(
      await cp.client.flowState(pipelineId, "dedup", { rewind_point_id: point.rewind_point_id }),
    ).toEqual(atPoint);
  });

  it("`ebb state` prints the rows at HEAD and at a point; `ebb run` shows the state operators", async () => {
    const ebb = async (...args: string[]) => {
      let out = "";
      let err = "";
      const code = await runCli([...args, "--endpoint", cp.plane.endpoint, "--token", cp.plane.token], {
        out: (text) => (out += text),
        err: (text) => (err += text),
        confirm: async () => true,
      });
      return { code, out, err };
    };
    const shown = await ebb("state", pipelineId, "dedup");
    expect(shown.code, shown.err).toBe(EXIT.ok);
    expect(shown.out).toMatch(/checkpoint \d+, watermark 2026-01-01T12:05:00.000Z, dedup: 4 rows/);
    // A section per state table, with its own columns.
    expect(shown.out).toMatch(/\ndedup:\nid\s*\n-+\n(\d+\s*\n){4}$/);
    const point = (await cp.client.rewindPoints(pipelineId)).rewind_points.at(-1)!.rewind_point_id;
    const json = await ebb("state", pipelineId, "dedup", "--point", point, "--json");
    expect(json.code, json.err).toBe(EXIT.ok);
    expect(
      json.out
        .trim()
        .split("\n")
        .map((line) => JSON.parse(line) as unknown),
    ).toEqual([
      { table: "dedup", key: { id: 1 }, value: {} },
      { table: "dedup", key: { id: 2 }, value: {} },
    ]);
    const refused = await ebb("state", pipelineId, "nope");
    expect(refused.code).toBe(EXIT.refused);
    expect(refused.err).toContain("FLOW_NOT_FOUND");

    // `ebb run`'s live progress shows the flow's state operators: 4 is a duplicate, 5 is new.
    await cp.land("reader/004.json", [
      { id: 4, ts: "2026-01-01 13:10:00" },
      { id: 5, ts: "2026-01-01 13:20:00" },
    ]);
    const ran = await ebb("run", pipelineId);
    expect(ran.code, ran.err).toBe(EXIT.ok);
    expect(ran.out).toMatch(
      /COMPLETED .*dedup 1 rows\/1 batches \(state 5 rows, \d+ bytes, 0 late dropped, 1 duplicates dropped, watermark 2026-01-01T12:20:00.000Z\)/,
    );
  });

  it.each([
    ["an unknown flow", "nope", {}, 404, "FLOW_NOT_FOUND", /no flow "nope": its flows are "dedup", "copy"/],
    ["a flow without state", "copy", {}, 400, "FLOW_HAS_NO_STATE", /keeps no operator state/],
    [
      "an unknown checkpoint",
      "dedup",
      { checkpoint_seq: 99 },
      404,
      "CHECKPOINT_NOT_FOUND",
      /no committed checkpoint 99 \(its HEAD is checkpoint \d+\)/,
    ],
    [
      "an unknown point",
      "dedup",
      { rewind_point_id: "01JAAAAAAAAAAAAAAAAAAAAAAA" },
      400,
      "INVALID_REWIND_SPECIFICATION.REWIND_POINT_NOT_FOUND",
      /not a live rewind point/,
    ],
    [
      "a checkpoint and a point",
      "dedup",
      { checkpoint_seq: 1, rewind_point_id: "x" },
      400,
      "INVALID_PARAMETER_VALUE",
      /not both/,
    ],
    [
      "a page token of another listing",
      "dedup",
      {
        page_token: Buffer.from(JSON.stringify({ v: "state/other/flow/x.json", s: 1, o: 0 })).toString(
          "base64url",
        ),
      },
      400,
      "INVALID_PARAMETER_VALUE",
      /page_token is not one this listing issued/,
    ],
  ])("refuses %s", async (_, flow, query, status, errorCode, message) => {
    const refused = await refusal(cp.client.flowState(pipelineId, flow, query));
    expect(refused).toMatchObject({ status, errorCode });
    expect((refused as Error).message).toMatch(message);
  });

  it("refuses an unknown query parameter by name", async () => {
    const refused = await refusal(
      cp.client.request("GET", `/api/2.0/pipelines/${pipelineId}/flows/dedup/state`, {
        query: { version: "1" },
      }),
    );
    expect(refused).toMatchObject({ status: 400 });
    expect((refused as Error).message).toContain("version");
  });
});
