import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { TERMINAL_STATES } from "../shared/client/ebb-client.ts";
import type { BenchPlane } from "./bench-plane.ts";

/**
 * What the event-stream benchmarks share (kafka.bench.ts, kinesis.bench.ts): the rows, the transform,
 * the auto_loader baseline over the same rows as JSON files, and one timed update through the API.
 * Each source's flow runs the same SQL over the same JSON values, so the ratio is the cost of reading
 * the stream instead of files.
 */

export const COLUMNS = { id: "BIGINT", amount: "BIGINT", region: "VARCHAR", ts: "VARCHAR" };

/** The transform both flows run; `row` is the JSON value (`value` for Kafka, `data` for Kinesis, the row itself for files). */
export const transform = (row: (column: string) => string) =>
  `SELECT ${row("id")} AS id, CAST(${row("amount")} AS DOUBLE) / 100 AS amount, upper(${row("region")}) AS region, ` +
  `CAST(${row("ts")} AS TIMESTAMP) AS ts FROM source WHERE ${row("amount")} % 10 <> 0`;

/** The rows the transform keeps of `count` (amounts that are multiples of 10 are filtered out). */
export const keptRows = (count: number) =>
  Array.from({ length: count }, (_, i) => (i * 7) % 1000).filter((amount) => amount % 10 !== 0).length;

/** Row `i` as its JSON text, the same for files and records. */
export function rowJson(i: number): string {
  const ts = new Date(Date.UTC(2026, 0, 1) + i * 1000).toISOString().replace("T", " ").slice(0, 19);
  return JSON.stringify({ id: i, amount: (i * 7) % 1000, region: ["eu", "us", "apac"][i % 3], ts });
}

/** Rows `[0, count)` as newline-delimited JSON files of `perFile` rows in `folder`. */
export async function writeJsonFiles(folder: string, count: number, perFile: number): Promise<void> {
  await mkdir(folder, { recursive: true });
  for (let first = 0; first < count; first += perFile) {
    const lines: string[] = [];
    for (let i = first; i < Math.min(count, first + perFile); i++) lines.push(rowJson(i));
    await writeFile(
      path.join(folder, `part-${String(first).padStart(9, "0")}.json`),
      lines.join("\n") + "\n",
    );
  }
}

/** A one-table pipeline `bench.<schema>.rows` reading `source` with `sql`. */
export function streamingTable(schema: string, source: unknown, sql: string, options?: object) {
  return {
    name: schema,
    catalog: "bench",
    schema,
    definition: {
      datasets: [
        {
          type: "streaming_table",
          name: "rows",
          flows: [{ name: "ingest", source, sql, ...(options ? { options } : {}) }],
        },
      ],
    },
  };
}

/** The auto_loader flow over `folder`. */
export const autoLoaderTable = (schema: string, folder: string) =>
  streamingTable(
    schema,
    { type: "auto_loader", path: folder, format: "json", schema: COLUMNS },
    transform((column) => column),
  );

/**
 * Creates the pipeline and times its first update, from the request that starts it to the answer
 * that says it completed (polled every 50 ms); fails unless the table then holds `expectedRows`.
 * Then times a second update, which finds nothing new: the fixed cost every update pays.
 */
export async function timedFirstUpdate(
  bench: BenchPlane,
  pipeline: ReturnType<typeof streamingTable>,
  expectedRows: number,
): Promise<{ ms: number; idleMs: number }> {
  const { client } = bench;
  const { pipeline_id } = await client.createPipeline(pipeline);
  const ms = await timedUpdate(bench, pipeline_id, pipeline.schema);
  const [row] = (
    await client.query(`bench.${pipeline.schema}.rows`, { sql: "SELECT count(*)::INTEGER AS n FROM t" })
  ).rows;
  if (row?.["n"] !== expectedRows)
    throw new Error(`the ${pipeline.schema} table holds ${String(row?.["n"])} rows, not ${expectedRows}`);
  return { ms, idleMs: await timedUpdate(bench, pipeline_id, pipeline.schema) };
}

async function timedUpdate(bench: BenchPlane, pipelineId: string, name: string): Promise<number> {
  const { client } = bench;
  const start = performance.now();
  const { update_id } = await client.startUpdate(pipelineId, {});
  let update;
  for (;;) {
    // A batch of many records keeps the event loop busy for a while, which can reset a kept-alive
    // connection under a poll; the poll is a plain read, so it is asked again.
    const answer = await client.getUpdate(pipelineId, update_id).catch((error: unknown) => {
      if (error instanceof TypeError && error.message === "fetch failed") return undefined;
      throw error;
    });
    if (answer && TERMINAL_STATES.includes(answer.update.state)) {
      update = answer.update;
      break;
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  const ms = performance.now() - start;
  if (update.state !== "COMPLETED") {
    const { events } = await client.events(pipelineId, { filter: "level = 'ERROR'" });
    throw new Error(`the ${name} update ${update.state}: ${JSON.stringify(events)}`);
  }
  return ms;
}

/** `rows` in `ms`, and in `ms - idleMs` (the update's fixed cost left out). */
export function throughput(rows: number, { ms, idleMs }: { ms: number; idleMs: number }): string {
  const rate = (time: number) => Math.round(rows / (time / 1000)).toLocaleString("en");
  return `${rate(ms)} rows/s (${ms.toFixed(0)} ms; ${rate(ms - idleMs)} rows/s without the ${idleMs.toFixed(0)} ms an update with nothing new takes)`;
}

/** An event stream under measurement: how it is filled and read, and how its records are spread. */
export interface BenchedStream {
  /** `kafka`, `kinesis`: its name in the figures. */
  readonly kind: string;
  /** How the records are spread (`4 partitions`), for the figures' first line. */
  readonly layout: string;
  /** Creates the stream `name` holding rows `[0, count)` as JSON records. */
  fill(name: string, count: number): Promise<void>;
  /** The one-table pipeline `schema` reading all `count` records of the stream `name` in one batch. */
  table(schema: string, name: string, count: number): ReturnType<typeof streamingTable>;
}

const WARM_UP_ROWS = 100;

/**
 * The stream against files, in one run: fills the stream `rows` with `rows` rows and writes the same
 * rows as JSON files of `rowsPerFile` (and a warm-up of WARM_UP_ROWS of each, so the figures leave
 * out loading the clients and warming the stand-ins), times the files' first update and the stream's,
 * and prints both rates and their ratio. The stream's timing is for the caller's limit line.
 */
export async function streamAgainstFiles(
  bench: BenchPlane,
  stream: BenchedStream,
  rows: number,
  rowsPerFile: number,
): Promise<{ ms: number; idleMs: number }> {
  const kept = keptRows(rows);
  await Promise.all([
    stream.fill("rows", rows),
    stream.fill("warm_up", WARM_UP_ROWS),
    writeJsonFiles(path.join(bench.landing, "rows"), rows, rowsPerFile),
    writeJsonFiles(path.join(bench.landing, "warm_up"), WARM_UP_ROWS, WARM_UP_ROWS),
  ]);

  const warmKept = keptRows(WARM_UP_ROWS);
  await timedFirstUpdate(bench, stream.table(`warm_${stream.kind}`, "warm_up", WARM_UP_ROWS), warmKept);
  await timedFirstUpdate(bench, autoLoaderTable("warm_files", path.join(bench.landing, "warm_up")), warmKept);

  const files = await timedFirstUpdate(
    bench,
    autoLoaderTable("files", path.join(bench.landing, "rows")),
    kept,
  );
  const read = await timedFirstUpdate(bench, stream.table(stream.kind, "rows", rows), kept);

  console.log(
    `${rows.toLocaleString("en")} JSON rows, ${stream.layout}, one batch; ${kept.toLocaleString("en")} kept by the transform`,
  );
  console.log(
    `${stream.kind} → streaming table: ${throughput(rows, read)}\n` +
      `the same rows from ${rows / rowsPerFile} JSON files through auto_loader: ${throughput(rows, files)}\n` +
      `ratio ${stream.kind} / files ${(files.ms / read.ms).toFixed(2)} (${((files.ms - files.idleMs) / (read.ms - read.idleMs)).toFixed(2)} without the fixed cost)`,
  );
  return read;
}
