import { NO_LIFECYCLE_EVENTS } from "../shared/control/plane/lifecycle-events.ts";
import { writeFile } from "node:fs/promises";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { EnvironmentControlPlane } from "../functions/runtime/control-plane-from-env.ts";
import type { ControlPlane } from "../shared/control/plane/control-plane.ts";
import { InProcessExecutions } from "../shared/control/updates/driver/in-process-executions.ts";
import { startUpdate } from "../shared/control/updates/start-update.ts";
import { startBenchPlane } from "./bench-plane.ts";

/**
 * Control-plane figures, on the embedded local runtime (API over loopback
 * HTTP, handlers and state machine in process, DynamoDB Local and the embedded S3):
 *
 * 1. start-update and get-update latency, p50 and p99 over `EBB_BENCH_CALLS` calls (default 1,000).
 *    Each start is a `validate_only` update of a one-dataset pipeline, awaited before the next start
 *    (one update runs at a time); only the start-update call itself is timed.
 * 2. A 10-dataset pipeline's rewind end to end through the API (start-update until COMPLETED, polled
 *    every 20 ms), and the same rewind started in process (start-update, then the in-process driver
 *    over the same steps), on the same tables in the same state: their ratio is the overhead of the
 *    API, Step Functions and Lambda invocations.
 * 3. The fixed cost of an update through the API: the 10-dataset pipeline's update with nothing new,
 *    start to COMPLETED, p50 of 20.
 * 4. Listing the rewind points with 10 and with 100 live points (median of 5 each): the listing checks
 *    that every point is still restorable, so it must not cost a snapshot load per point.
 */

const CALLS = Number(process.env["EBB_BENCH_CALLS"] ?? 1000);
const CHAIN = 10;

function percentile(sorted: readonly number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] as number;
}

function summary(label: string, samples: number[]): string {
  const sorted = [...samples].sort((a, b) => a - b);
  return `${label}: p50 ${percentile(sorted, 50).toFixed(1)} ms, p99 ${percentile(sorted, 99).toFixed(1)} ms (n=${samples.length})`;
}

function chainDefinition(landing: string) {
  const datasets: unknown[] = [
    {
      type: "streaming_table",
      name: "d0",
      flows: [
        {
          name: "f0",
          source: {
            type: "auto_loader",
            path: landing,
            format: "json",
            schema: { id: "BIGINT", v: "BIGINT" },
          },
          sql: "SELECT * FROM source",
        },
      ],
    },
  ];
  for (let i = 1; i < CHAIN; i++) {
    datasets.push({
      type: "streaming_table",
      name: `d${i}`,
      flows: [
        {
          name: `f${i}`,
          source: { type: "stream", dataset: `d${i - 1}` },
          sql: "SELECT id, v + 1 AS v FROM source",
        },
      ],
    });
  }
  return {
    name: "bench chain",
    catalog: "bench",
    schema: "chain",
    configuration: { "pipelines.rewind.enabled": "true" },
    definition: { datasets },
  };
}

export async function run(): Promise<void> {
  const { plane, client, landing, close } = await startBenchPlane("ebb-bench-landing-");
  const land = (file: string, ids: number[]) =>
    writeFile(path.join(landing, file), ids.map((id) => JSON.stringify({ id, v: id })).join("\n") + "\n");
  const runToEnd = async (pipelineId: string, body?: unknown, intervalMs = 100) => {
    const { update_id } = await client.startUpdate(pipelineId, body);
    const update = await client.waitForUpdate(pipelineId, update_id, { intervalMs });
    if (update.state !== "COMPLETED")
      throw new Error(`bench update ${update.state}: ${update.error?.message ?? ""}`);
  };
  try {
    // 1. Latency.
    const small = await client.createPipeline({
      ...chainDefinition(landing),
      name: "bench small",
      schema: "small",
      definition: { datasets: [chainDefinition(landing).definition.datasets[0]] },
    });
    const starts: number[] = [];
    let lastUpdate = "";
    for (let i = 0; i < CALLS; i++) {
      const started = performance.now();
      lastUpdate = (await client.startUpdate(small.pipeline_id, { validate_only: true })).update_id;
      starts.push(performance.now() - started);
      await plane.stepFunctions.settled();
    }
    const gets: number[] = [];
    for (let i = 0; i < CALLS; i++) {
      const started = performance.now();
      await client.getUpdate(small.pipeline_id, lastUpdate);
      gets.push(performance.now() - started);
    }
    console.log(summary("start-update (validate_only)", starts));
    console.log(summary("get-update", gets));

    // 2. Rewind of a 10-dataset pipeline: through the API vs in process.
    const { pipeline_id: chain } = await client.createPipeline(chainDefinition(landing));
    await land("1.json", [1, 2, 3]);
    await runToEnd(chain);
    const point = (await client.rewindPoints(chain)).rewind_points[0]!.rewind_point_id;
    await land("2.json", [4, 5, 6]);
    await runToEnd(chain);

    const viaApi = performance.now();
    await runToEnd(chain, { rewind_spec: { rewind_point_id: point } }, 20);
    const apiMs = performance.now() - viaApi;

    await runToEnd(chain); // replay: every table moves forward again
    const control = new EnvironmentControlPlane();
    const executions = new InProcessExecutions(() => driven);
    const driven: ControlPlane = {
      pipelines: control.pipelines,
      updates: control.updates,
      checkpoints: control.checkpoints,
      events: control.events,
      bucket: control.bucket,
      locate: control.locate,
      eventStreams: control.eventStreams,
      localRoots: control.localRoots,
      executions,
      sql: control.sql,
      clock: control.clock,
      lifecycle: NO_LIFECYCLE_EVENTS,
    };
    await driven.sql.analyze("SELECT 1"); // DuckDB's start-up is not the rewind's
    const inProcess = performance.now();
    const body = {
      cause: "API_CALL",
      validate_only: false,
      rewind_spec: { rewind_point_id: point },
    } as const;
    const rewound = await executions.settled((await startUpdate(driven, chain, body)).update_id);
    const inProcessMs = performance.now() - inProcess;
    if (rewound.state !== "COMPLETED") throw rewound.error;
    console.log(
      `rewind of ${CHAIN} datasets: through the API ${apiMs.toFixed(0)} ms, in process ${inProcessMs.toFixed(0)} ms, ratio ${(apiMs / inProcessMs).toFixed(2)}`,
    );

    // 3. An update with nothing new, through the API.
    const idle: number[] = [];
    for (let i = 0; i < 20; i++) {
      const started = performance.now();
      await runToEnd(chain, undefined, 5);
      idle.push(performance.now() - started);
    }
    console.log(summary(`update with nothing new, ${CHAIN} datasets, through the API`, idle));

    // 4. Rewind-point listing, 10 vs 100 points.
    const listing = async () => {
      const times: number[] = [];
      for (let i = 0; i < 5; i++) {
        const started = performance.now();
        await client.rewindPoints(chain);
        times.push(performance.now() - started);
      }
      return percentile(
        [...times].sort((a, b) => a - b),
        50,
      );
    };
    const captureUpTo = async (count: number) => {
      const live = (await client.rewindPoints(chain)).rewind_points.length;
      for (let i = live; i < count; i++) await client.captureRewindPoint(chain);
    };
    await captureUpTo(10);
    const tenMs = await listing();
    await captureUpTo(100);
    const hundredMs = await listing();
    console.log(
      `rewind-point listing: 10 points ${tenMs.toFixed(1)} ms, 100 points ${hundredMs.toFixed(1)} ms, ratio ${(hundredMs / tenMs).toFixed(2)}`,
    );
  } finally {
    await close();
  }
}
