import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EXIT, runCli } from "../../../shared/cli/main.ts";
import { startTestControlPlane, type TestControlPlane } from "../../support/control-plane.ts";

/**
 * `ebb run`'s live progress for every stateful operator, end to end through the CLI against the
 * local runtime: a deduplicating flow, a windowed aggregation and a stream-stream join each show the
 * state (rows, bytes), the rows the watermark dropped, their own figures (duplicates dropped, windows
 * emitted, joined and left outer rows) and the watermark; `ebb updates get --json` carries the same
 * figures with Spark's operator names; `ebb state` shows a window's state under the flow's names.
 */

const EVENTS = "{ id: BIGINT, ts: TIMESTAMP }";
const FEED = (time: string) => `{ id: VARCHAR, ad: VARCHAR, ${time}: TIMESTAMP }`;

function definition(landing: string): string {
  const auto = (folder: string, schema: string) =>
    `{ type: auto_loader, path: ${landing}/${folder}, format: json, schema: ${schema} }`;
  return [
    "name: stateful progress",
    "catalog: progress",
    "schema: cli",
    "datasets:",
    "  - type: streaming_table",
    "    name: unique_events",
    "    flows:",
    "      - name: dedup",
    `        source: ${auto("events", EVENTS)}`,
    "        watermark: { column: ts, delay: 5 minutes }",
    "        drop_duplicates: { keys: [id] }",
    "        sql: SELECT id, ts FROM source",
    "  - type: streaming_table",
    "    name: per_window",
    "    flows:",
    "      - name: windows",
    `        source: ${auto("events", EVENTS)}`,
    "        watermark: { column: ts, delay: 5 minutes }",
    `        sql: "SELECT window.start AS start, count(*) AS n FROM source GROUP BY window(ts, '10 minutes')"`,
    "  - type: streaming_table",
    "    name: clicks",
    "    flows:",
    "      - name: land_clicks",
    `        source: ${auto("clicks", FEED("click_time"))}`,
    "        sql: SELECT * FROM source",
    "  - type: streaming_table",
    "    name: impressions",
    "    flows:",
    "      - name: land_impressions",
    `        source: ${auto("impressions", FEED("impression_time"))}`,
    "        sql: SELECT * FROM source",
    "  - type: streaming_table",
    "    name: attributed",
    "    flows:",
    "      - name: attribute",
    "        source: { type: stream, dataset: clicks }",
    "        watermark: { column: click_time, delay: 5 minutes }",
    "        join: { stream: impressions, watermark: { column: impression_time, delay: 5 minutes } }",
    "        sql: SELECT c.id AS click, i.id AS impression FROM source c LEFT JOIN impressions i ON c.ad = i.ad AND c.click_time BETWEEN i.impression_time AND i.impression_time + INTERVAL 10 MINUTES",
  ].join("\n");
}

const at = (minute: number) => `2026-01-01 12:${String(minute).padStart(2, "0")}:00`;

describe("ebb run's progress for stateful flows", () => {
  let cp: TestControlPlane;
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

  beforeAll(async () => {
    cp = await startTestControlPlane();
  });
  afterAll(() => cp?.close());

  it("shows each operator's state metrics and watermark: dedup, windows and a join", async () => {
    for (const folder of ["events", "clicks", "impressions"])
      await mkdir(path.join(cp.landing, folder), { recursive: true });
    const file = path.join(cp.landing, "..", `${path.basename(cp.landing)}-progress.yaml`);
    await writeFile(file, definition(cp.landing));
    const created = await ebb("pipelines", "create", file);
    expect(created.code, created.err).toBe(EXIT.ok);
    const pipelineId = created.out.trim();

    // The first update: the watermarks start at the newest event less the delay.
    await cp.land("events/001.json", [
      { id: 1, ts: at(1) },
      { id: 2, ts: at(2) },
      { id: 2, ts: at(3) },
    ]);
    await cp.land("clicks/001.json", [
      { id: "c1", ad: "a", click_time: at(5) },
      { id: "c2", ad: "b", click_time: at(6) },
    ]);
    await cp.land("impressions/001.json", [{ id: "i1", ad: "a", impression_time: at(0) }]);
    const first = await ebb("run", pipelineId);
    expect(first.code, first.err).toBe(EXIT.ok);
    const last = (out: string) => out.trim().split("\n").at(-1)!;
    expect(last(first.out)).toMatch(
      /COMPLETED .*dedup 2 rows\/1 batches \(state 2 rows, \d+ bytes, 0 late dropped, 1 duplicates dropped, watermark 2026-01-01T11:58:00\.000Z\)/,
    );
    expect(last(first.out)).toMatch(
      /windows 0 rows\/1 batches \(state 1 rows, \d+ bytes, 0 late dropped, 0 windows emitted, watermark 2026-01-01T11:58:00\.000Z\)/,
    );
    expect(last(first.out)).toMatch(
      /attribute 1 rows\/1 batches \(state \d+ rows, \d+ bytes, 0 late dropped, 1 joined rows, 0 left outer rows, watermark 2026-01-01T11:55:00\.000Z\)/,
    );

    // The state reader shows the open window under the flow's names, not the engine's.
    const windowState = await ebb("state", pipelineId, "windows", "--json");
    expect(windowState.code, windowState.err).toBe(EXIT.ok);
    expect(
      windowState.out
        .trim()
        .split("\n")
        .map((line) => JSON.parse(line) as unknown),
    ).toEqual([
      {
        table: "windows",
        key: { window: { start: "2026-01-01T12:00:00.000Z", end: "2026-01-01T12:10:00.000Z" } },
        value: { "count(*)": 3 },
      },
    ]);
    // A join's sides, keyed by the batch each row arrived in and its place there; a left row says
    // whether it matched.
    const joinState = await ebb("state", pipelineId, "attribute", "--json");
    expect(joinState.code, joinState.err).toBe(EXIT.ok);
    const sides = joinState.out
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as { table: string; key: object; value: Record<string, unknown> });
    expect(
      sides.filter((row) => row.table === "join_left").map(({ key, value }) => ({ key, value })),
    ).toEqual([
      {
        key: { batch: 1, row: 1 },
        value: { id: "c1", ad: "a", click_time: expect.any(String), matched: true },
      },
      {
        key: { batch: 1, row: 2 },
        value: { id: "c2", ad: "b", click_time: expect.any(String), matched: false },
      },
    ]);
    expect(sides.filter((row) => row.table === "join_right").map((row) => row.key)).toEqual([
      { batch: 1, row: 1 },
    ]);
    const printed = await ebb("state", pipelineId, "attribute");
    expect(printed.out).toMatch(/join_left:\nbatch\s+row\s+id\s+ad\s+click_time\s+matched\n/);

    // The second: a late event and a duplicate; the watermark passes the first window's end and the
    // unmatched click's range, so the window and the left outer row are written.
    await cp.land("events/002.json", [
      { id: 3, ts: at(30) },
      { id: 4, ts: "2026-01-01 11:50:00" },
      { id: 1, ts: at(31) },
    ]);
    await cp.land("clicks/002.json", [{ id: "c3", ad: "c", click_time: at(30) }]);
    await cp.land("impressions/002.json", [{ id: "i3", ad: "c", impression_time: at(30) }]);
    const second = await ebb("run", pipelineId);
    expect(second.code, second.err).toBe(EXIT.ok);
    expect(last(second.out)).toMatch(
      /dedup 1 rows\/1 batches \(state 3 rows, \d+ bytes, 1 late dropped, 1 duplicates dropped, watermark 2026-01-01T12:26:00\.000Z\)/,
    );
    expect(last(second.out)).toMatch(
      /windows 1 rows\/1 batches \(state 1 rows, \d+ bytes, 1 late dropped, 1 windows emitted, watermark 2026-01-01T12:26:00\.000Z\)/,
    );
    expect(last(second.out)).toMatch(
      /attribute 2 rows\/1 batches \(state \d+ rows, \d+ bytes, 0 late dropped, 1 joined rows, 1 left outer rows, watermark 2026-01-01T12:25:00\.000Z\)/,
    );

    // The same figures in the update, under Spark's operator names.
    const { updates } = await cp.client.listUpdates(pipelineId);
    const got = await ebb("updates", "get", pipelineId, updates[0]!.update_id, "--json");
    const progress = (JSON.parse(got.out) as { progress: Record<string, { state: unknown }> }).progress;
    expect(progress["dedup"]?.state).toMatchObject({ operator_names: ["dedupe"], num_duplicates_dropped: 1 });
    expect(progress["windows"]?.state).toMatchObject({
      operator_names: ["stateStoreSave"],
      num_windows_emitted: 1,
    });
    expect(progress["attribute"]?.state).toMatchObject({
      operator_names: ["symmetricHashJoin"],
      num_joined_rows: 1,
      num_left_outer_rows: 1,
    });
  });
});
