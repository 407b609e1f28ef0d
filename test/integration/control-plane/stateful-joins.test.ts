import { mkdir } from "node:fs/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestControlPlane, type TestControlPlane } from "../../support/control-plane.ts";

/**
 * Stream-stream joins through the HTTP API on the local runtime: two streaming tables fed by
 * auto_loader, joined by a third flow under an event-time range. An inner join writes each pair once,
 * whichever stream brings its second row and in whichever batch; a left outer join writes an
 * unmatched click once the watermark passes its range; late rows are dropped and counted; a rewind
 * restores the join's state with the checkpoint, so the replay writes the same rows once. A join
 * without watermarks or time bounds is refused at create and validate_only, each with its own code.
 */

interface BatchProgress {
  readonly state_operators: Record<string, unknown>;
  readonly event_time: { readonly watermark: string | null };
}

const ON_RANGE =
  "c.ad = i.ad AND c.click_time BETWEEN i.impression_time AND i.impression_time + INTERVAL 10 MINUTES";

function definition(landing: string, join: "JOIN" | "LEFT JOIN", overrides: Record<string, unknown> = {}) {
  const feed = (name: string, time: string) => ({
    type: "streaming_table",
    name,
    flows: [
      {
        name: `land_${name}`,
        source: {
          type: "auto_loader",
          path: `${landing}/${name}`,
          format: "json",
          schema: { id: "VARCHAR", ad: "VARCHAR", [time]: "TIMESTAMP" },
        },
        sql: "SELECT * FROM source",
      },
    ],
  });
  return {
    datasets: [
      feed("clicks", "click_time"),
      feed("impressions", "impression_time"),
      {
        type: "streaming_table",
        name: "attributed",
        flows: [
          {
            name: "attribute",
            source: { type: "stream", dataset: "clicks" },
            watermark: { column: "click_time", delay: "5 minutes" },
            join: { stream: "impressions", watermark: { column: "impression_time", delay: "5 minutes" } },
            sql: `SELECT c.id AS click, i.id AS impression FROM source c ${join} impressions i ON ${ON_RANGE}`,
            ...overrides,
          },
        ],
      },
    ],
  };
}

describe("stream-stream joins through the API", () => {
  let cp: TestControlPlane;
  let seq = 0;

  beforeAll(async () => {
    cp = await startTestControlPlane();
  });
  afterAll(() => cp?.close());

  const create = async (
    name: string,
    join: "JOIN" | "LEFT JOIN",
    overrides: Record<string, unknown> = {},
  ) => {
    for (const feed of ["clicks", "impressions"])
      await mkdir(`${cp.landing}/${name}/${feed}`, { recursive: true });
    const { pipeline_id } = await cp.client.createPipeline({
      name,
      catalog: "joins",
      schema: name,
      configuration: { "pipelines.rewind.enabled": "true" },
      definition: definition(`${cp.landing}/${name}`, join, overrides),
    });
    return pipeline_id;
  };
  const at = (minute: number) => `2026-01-01 12:${String(minute).padStart(2, "0")}:00`;
  const click = (name: string, id: string, ad: string, minute: number) =>
    cp.land(`${name}/clicks/${String(++seq).padStart(3, "0")}.json`, [{ id, ad, click_time: at(minute) }]);
  const impression = (name: string, id: string, ad: string, minute: number) =>
    cp.land(`${name}/impressions/${String(++seq).padStart(3, "0")}.json`, [
      { id, ad, impression_time: at(minute) },
    ]);
  const run = async (pipelineId: string, body?: unknown) => {
    const { update_id } = await cp.client.startUpdate(pipelineId, body);
    const update = await cp.client.waitForUpdate(pipelineId, update_id, { intervalMs: 200 });
    expect(update.state, update.error?.message).toBe("COMPLETED");
    return update;
  };
  const joined = async (schema: string) =>
    (
      await cp.client.query(`joins.${schema}.attributed`, {
        sql: "SELECT click, impression FROM t ORDER BY click, impression",
      })
    ).rows;
  const progress = async (pipelineId: string) =>
    (await cp.client.events(pipelineId, { max_results: 200 })).events
      .map((e) => (e.details as Record<string, unknown>)["flow_progress"] as BatchProgress | undefined)
      .filter((p): p is BatchProgress => p?.state_operators?.["num_joined_rows"] !== undefined)
      .reverse();

  it("inner: each pair once, whichever side comes second; late rows dropped; a rewind restores the state", async () => {
    const id = await create("inner", "JOIN");
    await impression("inner", "i1", "a", 0);
    await click("inner", "c0", "b", 1);
    await run(id);
    // Both streams have a row: the join ran, nothing matched yet. Watermark min(11:56, 11:55).
    expect(await joined("inner")).toEqual([]);
    const point = (await cp.client.rewindPoints(id)).rewind_points[0]!.rewind_point_id;

    // The click comes after its impression (state on the right), then an impression after its click.
    await click("inner", "c1", "a", 4);
    await click("inner", "c2", "c", 20);
    await run(id);
    await impression("inner", "i2", "c", 15);
    await impression("inner", "i3", "a", 40);
    await run(id);
    const pairs = [
      { click: "c1", impression: "i1" },
      { click: "c2", impression: "i2" },
    ];
    expect(await joined("inner")).toEqual(pairs);
    // Watermark min(12:15, 12:35) = 12:15: an impression at 12:01 is late.
    await impression("inner", "late", "a", 1);
    await run(id);
    expect(await joined("inner")).toEqual(pairs);
    const batches = await progress(id);
    expect(batches.map((b) => b.state_operators["num_joined_rows"])).toEqual([0, 1, 1, 0]);
    // An inner join lets no row go unmatched: it reports no left outer rows at all, not zero.
    expect(batches.every((b) => !("num_left_outer_rows" in b.state_operators))).toBe(true);
    expect(batches.map((b) => b.state_operators["num_rows_dropped_by_watermark"])).toEqual([0, 0, 0, 1]);
    expect(batches.map((b) => b.event_time.watermark)).toEqual([
      "2026-01-01T11:55:00.000Z",
      // Clicks' watermark 12:15, impressions' still 11:55: the join waits for the slower stream.
      "2026-01-01T11:55:00.000Z",
      "2026-01-01T12:15:00.000Z",
      "2026-01-01T12:15:00.000Z",
    ]);

    // Back to after the first batch: the state holds i1 (and c0) again, so the replay pairs c1 with
    // i1 from the state. It reads every later row in one batch, whose watermark before it is 11:55:
    // there the 12:01 impression is on time, and pairs with c1 (lateness is per batch, as in Spark).
    await run(id, { rewind_spec: { rewind_point_id: point } });
    expect(await joined("inner")).toEqual([]);
    await run(id);
    expect(await joined("inner")).toEqual([
      { click: "c1", impression: "i1" },
      { click: "c1", impression: "late" },
      { click: "c2", impression: "i2" },
    ]);
  });

  it("a join reading files itself: a batch with new rows only in the joined stream reads no file again", async () => {
    const id = await create("files", "JOIN", {
      source: {
        type: "auto_loader",
        path: `${cp.landing}/files/clicks`,
        format: "json",
        schema: { id: "VARCHAR", ad: "VARCHAR", click_time: "TIMESTAMP" },
      },
    });
    await click("files", "c1", "a", 4);
    await impression("files", "i1", "a", 0);
    await run(id);
    expect(await joined("files")).toEqual([{ click: "c1", impression: "i1" }]);
    // Only the joined stream has a new row: the click waits in the state and meets it once.
    await impression("files", "i2", "a", 2);
    await run(id);
    expect(await joined("files")).toEqual([
      { click: "c1", impression: "i1" },
      { click: "c1", impression: "i2" },
    ]);
  });

  it("left outer: an unmatched click is written once, when the watermark passes its range", async () => {
    const id = await create("outer", "LEFT JOIN");
    await impression("outer", "i1", "a", 0);
    await click("outer", "c1", "a", 5);
    await click("outer", "c2", "z", 6);
    await run(id);
    expect(await joined("outer")).toEqual([{ click: "c1", impression: "i1" }]);
    // Watermark min(12:01, 11:55) = 11:55: c2 at 12:06 could still meet an impression from 11:56 to
    // 12:06, so it waits.
    await impression("outer", "i9", "y", 30);
    await click("outer", "c3", "y", 31);
    await run(id);
    // Watermark min(12:26, 12:25) = 12:25 > 12:06: c2 is let go unmatched and written with NULL.
    expect(await joined("outer")).toEqual([
      { click: "c1", impression: "i1" },
      { click: "c2", impression: null },
      { click: "c3", impression: "i9" },
    ]);
    const batches = await progress(id);
    expect(batches.map((b) => b.state_operators["num_left_outer_rows"])).toEqual([0, 1]);
  });

  it("refuses a join without watermarks or time bounds, at create, dry run and edit, each with its own code", async () => {
    const landing = `${cp.landing}/refused`;
    const create = (overrides: Record<string, unknown>, dryRun: boolean) =>
      refusal(
        cp.client.createPipeline({
          name: "refused",
          catalog: "joins",
          schema: "refused",
          ...(dryRun ? { dry_run: true } : {}),
          definition: definition(landing, "JOIN", overrides),
        }),
      );
    const cases: [Record<string, unknown>, string, RegExp][] = [
      [
        { watermark: undefined },
        "STREAM_JOIN_WATERMARK_REQUIRED",
        /needs a watermark on both streams.*add watermark: \{column: "<event time column of source>"/,
      ],
      [
        { join: { stream: "impressions" } },
        "STREAM_JOIN_WATERMARK_REQUIRED",
        /add join\.watermark: \{column: "<event time column of impressions>"/,
      ],
      [
        { sql: "SELECT c.id AS click FROM source c JOIN impressions i ON c.ad = i.ad" },
        "STREAM_JOIN_TIME_BOUND_REQUIRED",
        /without an event-time range: bound the event times.*BETWEEN/,
      ],
      [
        {
          sql: "SELECT c.id FROM source c LEFT JOIN impressions i ON c.ad = i.ad AND c.click_time >= i.impression_time",
        },
        "STREAM_JOIN_TIME_BOUND_REQUIRED",
        /without an upper and a lower event-time bound/,
      ],
      [
        { sql: `SELECT c.id FROM source c FULL JOIN impressions i ON ${ON_RANGE}` },
        "STREAM_JOIN_NOT_SUPPORTED",
        /a stream-stream join is INNER or LEFT/,
      ],
    ];
    for (const [overrides, code, message] of cases) {
      for (const dryRun of [true, false]) {
        const refused = await create(overrides, dryRun);
        expect(refused, code).toMatchObject({ status: 400, errorCode: code });
        expect(refused!.message).toMatch(message);
      }
    }

    // An edit is refused the same way, and the definition stays as it was.
    const id = await (async () => {
      await mkdir(`${landing}/clicks`, { recursive: true });
      await mkdir(`${landing}/impressions`, { recursive: true });
      return (
        await cp.client.createPipeline({
          name: "edited",
          catalog: "joins",
          schema: "edited",
          definition: definition(landing, "JOIN"),
        })
      ).pipeline_id;
    })();
    const edit = await refusal(
      cp.client.editPipeline(id, { definition: definition(landing, "JOIN", { watermark: undefined }) }),
    );
    expect(edit).toMatchObject({ status: 400, errorCode: "STREAM_JOIN_WATERMARK_REQUIRED" });
  });

  it("refuses a changed join (range or keys) up front: validate_only, start, dry run and rewind; the ways out work", async () => {
    const id = await create("changed", "JOIN");
    await impression("changed", "i1", "a", 0);
    await click("changed", "c1", "a", 4);
    await run(id);
    const point = (await cp.client.rewindPoints(id)).rewind_points[0]!.rewind_point_id;
    const landing = `${cp.landing}/changed`;
    const sqlOn = (on: string) =>
      `SELECT c.id AS click, i.id AS impression FROM source c JOIN impressions i ON ${on}`;
    // The definition as it ran passes: the check compares like with like.
    await run(id, { validate_only: true });

    const changes = [
      {
        sql: sqlOn(ON_RANGE.replace("10 MINUTES", "20 MINUTES")),
        needs: /needs an INNER join with source's event time from 0 minutes to 20 minutes/,
      },
      {
        sql: sqlOn(ON_RANGE.replace("c.ad = i.ad", "c.id = i.id")),
        needs:
          /needs an INNER join with source's event time from 0 minutes to 10 minutes after the joined stream's under another ON condition \(other join keys\)/,
      },
    ];
    for (const change of changes) {
      await cp.client.editPipeline(id, { definition: definition(landing, "JOIN", { sql: change.sql }) });
      const updates = (await cp.client.listUpdates(id)).updates.length;
      for (const body of [
        { validate_only: true },
        {},
        { rewind_spec: { rewind_point_id: point, dry_run: true } },
        { rewind_spec: { rewind_point_id: point } },
      ]) {
        const refused = await refusal(cp.client.startUpdate(id, body));
        expect(refused, JSON.stringify(body)).toMatchObject({ status: 409, errorCode: "INCOMPATIBLE_STATE" });
        expect(refused!.message).toMatch(
          /flow "attribute" cannot continue from its operator state: its join state holds an INNER join with source's event time from 0 minutes to 10 minutes/,
        );
        expect(refused!.message).toMatch(change.needs);
        expect(refused!.message).toMatch(/reset the flow's checkpoint \(reset_checkpoint_selection\)/);
      }
      // Refused before anything ran: no update recorded.
      expect((await cp.client.listUpdates(id)).updates.length).toBe(updates);
    }

    // A flow that no longer joins ignores the join's state; one whose checkpoint is reset starts anew.
    await cp.client.editPipeline(id, {
      definition: definition(landing, "JOIN", {
        join: undefined,
        sql: "SELECT id AS click, CAST(NULL AS VARCHAR) AS impression FROM source",
      }),
    });
    const refused = await refusal(cp.client.startUpdate(id, { validate_only: true }));
    expect(refused).toMatchObject({ status: 409, errorCode: "INCOMPATIBLE_STATE" });
    expect(refused!.message).toMatch(
      /a stream-stream join with impressions on click_time and impression_time/,
    );
    await cp.client.editPipeline(id, { definition: definition(landing, "JOIN", { sql: changes[1]!.sql }) });
    await run(id, { reset_checkpoint_selection: ["attribute"] });
    await run(id, { validate_only: true });
  });
});

const refusal = (promise: Promise<unknown>) =>
  promise.then(
    () => undefined,
    (error: { status?: number; errorCode?: string; message: string }) => error,
  );
