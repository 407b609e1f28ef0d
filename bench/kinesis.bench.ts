import { performance } from "node:perf_hooks";
import {
  GetRecordsCommand,
  GetShardIteratorCommand,
  KinesisClient,
  ListShardsCommand,
} from "@aws-sdk/client-kinesis";
import { NodeHttpHandler } from "@smithy/node-http-handler";
import { startTestKinesis, type TestKinesis } from "../test/support/kinesis.ts";
import { startBenchPlane } from "./bench-plane.ts";
import { COLUMNS, rowJson, streamAgainstFiles, streamingTable, transform } from "./stream-bench.ts";

/**
 * Kinesis → streaming table, measured in one run on the local runtime against the Kinesis emulator
 * (kinesis-mock, on loopback; started and stopped here):
 *
 * 1. Ebb: the first update of a pipeline reading ROWS JSON records from a stream of SHARDS shards
 *    (`max_offsets_per_batch` large enough for one batch) through the transform, in rows/s.
 * 2. The same rows as JSON files through auto_loader, the same transform: the ratio Kinesis / files.
 * 3. The limit: the emulator's own read rate, a bare GetRecords loop over every shard with the AWS
 *    SDK (at most 10,000 records a call, as Ebb asks), decoding nothing.
 *
 * A small warm-up update of each source runs first (stream-bench.ts).
 */

/**
 * Fewer rows than the Kafka bench: the emulator's PutRecords slows as a shard grows (in one run here,
 * 1,000 records into one shard took 0.6 s, 10,000 took 24 s), so the rows are spread over more shards.
 */
const ROWS = Number(process.env["EBB_BENCH_KINESIS_ROWS"] ?? 20_000);
const SHARDS = 4;
const ROWS_PER_FILE = 2_000;
/** PutRecords' own maximum. */
const PUT_CHUNK = 500;

async function fill(kinesis: TestKinesis, stream: string, count: number): Promise<void> {
  await kinesis.createStream(stream, SHARDS);
  for (let first = 0; first < count; first += PUT_CHUNK) {
    const records = [];
    for (let i = first; i < Math.min(count, first + PUT_CHUNK); i++)
      records.push({ partitionKey: `key-${i % 64}`, data: rowJson(i) });
    await kinesis.put(stream, records);
  }
}

const kinesisTable = (schema: string, kinesis: TestKinesis, stream: string, records: number) =>
  streamingTable(
    schema,
    {
      type: "kinesis",
      stream,
      region: kinesis.region,
      endpoint: kinesis.endpoint,
      starting_position: "TRIM_HORIZON",
      data_format: "json",
      schema: COLUMNS,
    },
    transform((column) => `data.${column}`),
    { max_offsets_per_batch: records },
  );

/** Records per second of reading every shard of `stream` from its start with bare GetRecords calls. */
async function bareRead(kinesis: TestKinesis, stream: string, count: number): Promise<number> {
  const client = new KinesisClient({
    endpoint: kinesis.endpoint,
    region: kinesis.region,
    credentials: { accessKeyId: "ebb-bench", secretAccessKey: "ebb-bench" },
    requestHandler: new NodeHttpHandler(),
  });
  try {
    const start = performance.now();
    const { Shards = [] } = await client.send(new ListShardsCommand({ StreamName: stream }));
    let records = 0;
    for (const shard of Shards) {
      let { ShardIterator: iterator } = await client.send(
        new GetShardIteratorCommand({
          StreamName: stream,
          ShardId: shard.ShardId,
          ShardIteratorType: "TRIM_HORIZON",
        }),
      );
      while (iterator) {
        const page = await client.send(new GetRecordsCommand({ ShardIterator: iterator, Limit: 10_000 }));
        records += page.Records?.length ?? 0;
        iterator = page.NextShardIterator;
        if ((page.Records?.length ?? 0) === 0 && (page.MillisBehindLatest ?? 0) === 0) break;
      }
    }
    const ms = performance.now() - start;
    if (records !== count) throw new Error(`the bare read found ${records} records, not ${count}`);
    return records / (ms / 1000);
  } finally {
    client.destroy();
  }
}

export async function run(): Promise<void> {
  const [kinesis, bench] = await Promise.all([startTestKinesis(), startBenchPlane("ebb-bench-kinesis-")]);
  try {
    const stream = await streamAgainstFiles(
      bench,
      {
        kind: "kinesis",
        layout: `${SHARDS} shards`,
        fill: (name, count) => fill(kinesis, name, count),
        table: (schema, name, count) => kinesisTable(schema, kinesis, name, count),
      },
      ROWS,
      ROWS_PER_FILE,
    );
    const limit = await bareRead(kinesis, "rows", ROWS);
    console.log(
      `the emulator's own read rate (bare GetRecords over every shard): ${Math.round(limit).toLocaleString("en")} records/s; ` +
        `Ebb's update runs at ${((ROWS / (stream.ms / 1000) / limit) * 100).toFixed(1)}% of it`,
    );
  } finally {
    await bench.close();
    await kinesis.stop();
  }
}
