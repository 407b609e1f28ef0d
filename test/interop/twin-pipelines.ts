import fc from "fast-check";
import { mkdtemp, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, expect } from "vitest";
import { startTestControlPlane, type TestControlPlane } from "../support/control-plane.ts";

/**
 * Twin pipelines for the Spark engine's equivalence tests (spark-engine.test.ts,
 * spark-stateful.test.ts, spark-cdc.test.ts, …), through the HTTP API on the local runtime: both get the same files; one
 * runs every batch on DuckDB, the other each update on the engine a step names (switching
 * `pipelines.engine` between updates), with rewinds to an earlier point (also across a switch) and
 * replays. After each update both pipelines' tables hold the same rows, and the test's own check
 * (data quality counts, state versions) passes; at the end Spark has run some batch, and only Spark
 * ran the Spark updates.
 */

export type Engine = "duckdb" | "spark";
export type TwinStep<Land> =
  | { kind: "land"; rows: Land }
  | { kind: "update"; engine: Engine }
  | { kind: "rewind"; back: number; engine: Engine }
  /** A full refresh of every dataset (`full_refresh: true`) on the engine. */
  | { kind: "refresh"; engine: Engine }
  /** The flows' checkpoints reset (`reset_checkpoint_selection`): they read every file again, on the engine. */
  | { kind: "reset"; flows: readonly string[]; engine: Engine };

/** The DuckDB-only twin and the mixed one. */
export interface Twins<T> {
  readonly duck: T;
  readonly mixed: T;
}

export interface TwinSetup<Land> {
  readonly catalog: string;
  /** The pipelines' name (the schema is appended). */
  readonly name: string;
  readonly definition: (landing: string) => unknown;
  /** The tables compared after each update. */
  readonly tables: readonly string[];
  /** A landed file's lines; `file` is the file's place in the suite (also its name). */
  readonly lines: (rows: Land, file: number) => readonly string[];
  /**
   * Flows (materialized views kept incrementally) whose incremental refreshes run on DuckDB whatever
   * the engine (spark/view-engine-choice.ts): not counted by the check that only Spark ran the Spark
   * updates.
   */
  readonly duckDbOnly?: readonly string[];
  /** Checked after each update (with both updates' ids), beside the tables; `what` names the step. */
  readonly check?: (twins: Twins<{ id: string; update: string }>, what: string) => Promise<void>;
}

/**
 * The steps fast-check picks: land `land`'s rows, update on an engine, rewind back and replay (and
 * with `fullRefresh`, a full refresh on an engine).
 */
export function twinStep<Land>(
  land: fc.Arbitrary<Land>,
  options: { readonly fullRefresh?: boolean } = {},
): fc.Arbitrary<TwinStep<Land>> {
  const engine = fc.constantFrom<Engine>("duckdb", "spark");
  return fc.oneof(
    fc.record({ kind: fc.constant("land" as const), rows: land }),
    fc.record({ kind: fc.constant("update" as const), engine }),
    fc.record({ kind: fc.constant("rewind" as const), back: fc.integer({ min: 1, max: 3 }), engine }),
    ...(options.fullRefresh ? [fc.record({ kind: fc.constant("refresh" as const), engine })] : []),
  );
}

export function twinPipelines(cp: () => TestControlPlane) {
  let file = 0;
  let pipelines = 0;

  /** Runs an update to its end; one that did not complete fails with its error events. */
  const run = async (pipelineId: string, body: unknown = {}) => {
    const client = cp().client;
    const { update_id } = await client.startUpdate(pipelineId, body);
    // Generous: a Spark update replaying several batches of every flow, on a loaded 2-core machine.
    const update = await client.waitForUpdate(pipelineId, update_id, { intervalMs: 200, timeoutMs: 600_000 });
    if (update.state !== "COMPLETED") {
      const { events } = await client.events(pipelineId, {
        filter: `level = 'ERROR' AND origin.update_id = '${update_id}'`,
      });
      throw new Error(
        `update ${update_id} ${update.state}: ${JSON.stringify(events.map((e) => (e as { error?: unknown }).error))}`,
      );
    }
    return update_id;
  };
  /** The update's `flow_progress` details, with the flow's name. */
  const progress = async (pipelineId: string, updateId: string) => {
    const { events } = await cp().client.events(pipelineId, {
      filter: `event_type = 'flow_progress' AND origin.update_id = '${updateId}'`,
    });
    return events.map((e) => ({
      flow: (e.origin as { flow_name?: string }).flow_name,
      ...(e.details["flow_progress"] as { engine?: string; data_quality?: unknown }),
    }));
  };
  /** A flow's state at HEAD as the state reader answers it, all pages, without the version's key. */
  const flowState = async (pipelineId: string, flow: string) => {
    const client = cp().client;
    let page = await client.flowState(pipelineId, flow, { max_results: 1000 });
    const all = [...page.rows];
    while (page.next_page_token) {
      page = await client.flowState(pipelineId, flow, {
        max_results: 1000,
        page_token: page.next_page_token,
      });
      all.push(...page.rows);
    }
    return { watermark: page.watermark, tables: page.tables, rows: all, empty: page.state_version === null };
  };

  /** Plays the steps on a fresh pair of twins. */
  const play = async <Land>(setup: TwinSetup<Land>, steps: readonly TwinStep<Land>[]) => {
    const client = cp().client;
    const n = pipelines++;
    const schemas = { duck: `duck_${n}`, mixed: `mixed_${n}` };
    const landings = {
      duck: await mkdtemp(path.join(cp().landing, "duck-")),
      mixed: await mkdtemp(path.join(cp().landing, "mixed-")),
    };
    const settings = (twin: keyof Twins<string>, engine: Engine) => ({
      name: `${setup.name} ${schemas[twin]}`,
      catalog: setup.catalog,
      schema: schemas[twin],
      configuration: { "pipelines.rewind.enabled": "true", "pipelines.engine": engine },
      definition: setup.definition(landings[twin]),
    });
    const ids = {
      duck: (await client.createPipeline(settings("duck", "duckdb"))).pipeline_id,
      mixed: (await client.createPipeline(settings("mixed", "duckdb"))).pipeline_id,
    };
    const rows = async (schema: string, table: string) =>
      (
        await client.query(`${setup.catalog}.${schema}.${table}`, {
          sql: "SELECT * FROM t ORDER BY ALL",
          limit: 10_000,
        })
      ).rows;
    const points: Twins<string>[] = [];
    const filesAtStart = file;
    const sparkRan: string[] = [];
    for (const s of steps) {
      if (s.kind === "land") {
        const lines = setup.lines(s.rows, file).join("\n") + "\n";
        const name = `f${String(file++).padStart(5, "0")}.json`;
        await writeFile(path.join(landings.duck, name), lines);
        await writeFile(path.join(landings.mixed, name), lines);
        continue;
      }
      await client.editPipeline(ids.mixed, settings("mixed", s.engine));
      if (s.kind === "rewind") {
        const point = points.at(-Math.min(s.back, points.length));
        if (!point) continue;
        await run(ids.duck, { rewind_spec: { rewind_point_id: point.duck } });
        await run(ids.mixed, { rewind_spec: { rewind_point_id: point.mixed } });
      }
      const body =
        s.kind === "refresh"
          ? { full_refresh: true }
          : s.kind === "reset"
            ? { reset_checkpoint_selection: s.flows }
            : {};
      const updates = { duck: await run(ids.duck, body), mixed: await run(ids.mixed, body) };
      // A rewind to a point before a full refresh is refused (REWIND_BEFORE_FULL_REFRESH).
      if (s.kind === "refresh") points.length = 0;
      if (s.engine === "spark")
        sparkRan.push(
          ...(await progress(ids.mixed, updates.mixed))
            .filter((p) => !setup.duckDbOnly?.includes(p.flow ?? ""))
            .map((p) => p.engine)
            .filter((e) => e !== undefined),
        );
      const what = JSON.stringify(s);
      await setup.check?.(
        { duck: { id: ids.duck, update: updates.duck }, mixed: { id: ids.mixed, update: updates.mixed } },
        what,
      );
      // A pipeline that has written no table yet has nothing to capture.
      if (file === filesAtStart) continue;
      const captured = await Promise.all([
        client.captureRewindPoint(ids.duck),
        client.captureRewindPoint(ids.mixed),
      ]);
      points.push({ duck: captured[0].rewind_point_id, mixed: captured[1].rewind_point_id });
      for (const table of setup.tables)
        expect(await rows(schemas.mixed, table), `${table} after ${what}`).toEqual(
          await rows(schemas.duck, table),
        );
    }
    expect(sparkRan.length).toBeGreaterThan(0);
    expect(new Set(sparkRan)).toEqual(new Set(["spark"]));
  };

  return { run, progress, flowState, play };
}

/**
 * `twinPipelines` on a control plane of the enclosing `describe`'s own: started before its tests,
 * closed after them. `cp` answers it once started.
 */
export function twinsOnControlPlane() {
  let started: TestControlPlane | undefined;
  beforeAll(async () => {
    started = await startTestControlPlane();
  });
  afterAll(async () => started?.close());
  const cp = () => {
    if (!started)
      throw new Error("the twins' control plane is not started: call twinsOnControlPlane() in a describe");
    return started;
  };
  return { ...twinPipelines(cp), cp };
}
