import path from "node:path";
import { findJava } from "../infra/local/java-runtime.ts";
import { kafkaLibs } from "../infra/local/kafka-artifacts.ts";
import { spawnTethered } from "../infra/local/stand-in-process.ts";
import { startTestKafka, type TestKafka } from "../test/support/kafka.ts";
import { startBenchPlane } from "./bench-plane.ts";
import { rowJson, streamAgainstFiles, streamingTable, transform } from "./stream-bench.ts";

/**
 * Kafka → streaming table, measured in one run on the local runtime against a real Apache Kafka
 * broker (KRaft, one node, on loopback; started and stopped here):
 *
 * 1. Ebb: the first update of a pipeline reading ROWS JSON records from a topic of PARTITIONS
 *    partitions (one batch) through the transform, in rows/s from start to completion.
 * 2. The same rows as JSON files through auto_loader, the same transform: the ratio Kafka / files.
 * 3. The limit: the broker's own consumer perf tool (`kafka-consumer-perf-test`, the
 *    `ConsumerPerformance` class of the same Kafka jars) reading the same topic on the same machine.
 *
 * A small warm-up update of each source runs first, so the figures do not include loading the Kafka
 * client (it compiles its protocol schemas on first use) or warming the stand-ins (stream-bench.ts).
 */

const ROWS = Number(process.env["EBB_BENCH_KAFKA_ROWS"] ?? 200_000);
const PARTITIONS = 4;
const ROWS_PER_FILE = 10_000;
/** Records per produce request. */
const PRODUCE_CHUNK = 5_000;

async function fill(kafka: TestKafka, topic: string, count: number): Promise<void> {
  await kafka.createTopic(topic, PARTITIONS);
  for (let first = 0; first < count; first += PRODUCE_CHUNK) {
    const records = [];
    for (let i = first; i < Math.min(count, first + PRODUCE_CHUNK); i++)
      records.push({ value: rowJson(i), partition: i % PARTITIONS });
    await kafka.produce(topic, records);
  }
}

const kafkaTable = (schema: string, bootstrap: string, topic: string) =>
  streamingTable(
    schema,
    {
      type: "kafka",
      bootstrap_servers: bootstrap,
      topic,
      starting_offsets: "earliest",
      value_format: "json",
      schema: { id: "BIGINT", amount: "BIGINT", region: "VARCHAR", ts: "VARCHAR" },
    },
    transform((column) => `value.${column}`),
  );

/** `ConsumerPerformance`'s figures for reading `count` records of `topic`, by its CSV header's names. */
async function consumerPerformance(
  kafka: TestKafka,
  topic: string,
  count: number,
): Promise<Record<string, number>> {
  const [java, libs] = await Promise.all([findJava(), kafkaLibs()]);
  const tool = await spawnTethered("Kafka consumer perf tool", java.command, [
    `-Dlog4j2.configurationFile=${path.join(kafka.broker.dataDir, "log4j2.properties")}`,
    "-cp",
    path.join(libs, "*"),
    "org.apache.kafka.tools.ConsumerPerformance",
    "--bootstrap-server",
    kafka.broker.bootstrap,
    "--topic",
    topic,
    "--messages",
    String(count),
    "--timeout",
    "30000",
  ]);
  await tool.exited;
  const lines = tool.recentOutput().split("\n");
  const header = lines.findIndex((line) => line.startsWith("start.time"));
  const names = lines[header]?.split(",").map((name) => name.trim()) ?? [];
  const values = lines[header + 1]?.split(",").map((value) => value.trim()) ?? [];
  if (header < 0 || values.length !== names.length)
    throw new Error(`ConsumerPerformance printed no figures:\n${tool.recentOutput()}`);
  return Object.fromEntries(names.map((name, i) => [name, Number(values[i])]));
}

export async function run(): Promise<void> {
  const [kafka, bench] = await Promise.all([startTestKafka(), startBenchPlane("ebb-bench-kafka-")]);
  try {
    const bootstrap = kafka.broker.bootstrap;
    const topic = await streamAgainstFiles(
      bench,
      {
        kind: "kafka",
        layout: `${PARTITIONS} partitions`,
        fill: (name, count) => fill(kafka, name, count),
        table: (schema, name) => kafkaTable(schema, bootstrap, name),
      },
      ROWS,
      ROWS_PER_FILE,
    );
    const limit = await consumerPerformance(kafka, "rows", ROWS);
    const brokerRate = limit["fetch.nMsg.sec"] ?? NaN;
    console.log(
      `the broker's own consumer (ConsumerPerformance, same topic): ${Math.round(brokerRate).toLocaleString("en")} records/s fetching ` +
        `(${Math.round(limit["nMsg.sec"] ?? NaN).toLocaleString("en")} records/s with its group join); ` +
        `Ebb's update runs at ${((ROWS / (topic.ms / 1000) / brokerRate) * 100).toFixed(1)}% of it`,
    );
  } finally {
    await bench.close();
    await kafka.stop();
  }
}
