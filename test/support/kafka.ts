import { Admin, ConfigResourceTypes, Producer, stringSerializers } from "@platformatic/kafka";
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { startKafkaBroker, type RunningKafkaBroker } from "../../infra/local/kafka-broker.ts";

/**
 * A real Kafka broker for the tests that read Kafka (started in their `beforeAll`, stopped in
 * `afterAll`; the tether stops it if the test process dies), with a producer and admin calls.
 */
export interface TestKafka {
  broker: RunningKafkaBroker;
  createTopic(topic: string, partitions: number, configs?: Record<string, string>): Promise<void>;
  addPartitions(topic: string, count: number): Promise<void>;
  /** Produces JSON values (strings pass as they are) to a partition; keys are strings. */
  produce(
    topic: string,
    records: readonly {
      key?: string;
      value: unknown;
      partition?: number;
      headers?: Record<string, string>;
    }[],
  ): Promise<void>;
  /** Sets topic configs (`retention.ms`, `segment.ms`, …). */
  configure(topic: string, configs: Record<string, string>): Promise<void>;
  earliest(topic: string, partition: number): Promise<number>;
  /** Deletes a partition's records before `offset` (Kafka's DeleteRecords, as `kafka-delete-records.sh`). */
  deleteRecords(topic: string, partition: number, offset: number): Promise<void>;
  /** Stops the broker and starts it again on the same port and data. */
  restart(): Promise<void>;
  stop(): Promise<void>;
}

export async function startTestKafka(): Promise<TestKafka> {
  // A folder of our own, so a restart finds the broker's topics and offsets again.
  const dataDir = await mkdtemp(path.join(os.tmpdir(), "ebb-test-kafka-"));
  let broker = await startKafkaBroker({ dataDir });
  const clients = () => {
    const common = {
      clientId: "ebb-test",
      bootstrapBrokers: [broker.bootstrap],
      retries: 5,
      retryDelay: 300,
    };
    return {
      admin: new Admin(common),
      producer: new Producer({ ...common, serializers: stringSerializers }),
    };
  };
  let { admin, producer } = clients();
  // Each look-up uses a fresh consumer, so it sees the broker's metadata as it is now.
  const earliestOffsets = async (topic: string): Promise<readonly bigint[]> => {
    const { Consumer, ListOffsetTimestamps } = await import("@platformatic/kafka");
    const consumer = new Consumer({
      clientId: "ebb-test",
      groupId: "ebb-test",
      bootstrapBrokers: [broker.bootstrap],
    });
    try {
      const offsets = await consumer.listOffsets({
        topics: [topic],
        timestamp: ListOffsetTimestamps.EARLIEST,
      });
      return offsets.get(topic) ?? [];
    } finally {
      await consumer.close(true);
    }
  };
  const partitionCount = async (topic: string): Promise<number> => (await earliestOffsets(topic)).length;
  const test: TestKafka = {
    get broker() {
      return broker;
    },
    async createTopic(topic, partitions, configs = {}) {
      await admin.createTopics({
        topics: [topic],
        partitions,
        replicas: 1,
        configs: Object.entries(configs).map(([name, value]) => ({ name, value })),
      });
    },
    async addPartitions(topic, count) {
      await admin.createPartitions({ topics: [{ name: topic, count, assignments: null }] });
      // The broker answers before every listener's metadata has the new partitions: wait until a
      // fresh client sees them, so the next produce and run cannot race the propagation.
      const deadline = Date.now() + 15_000;
      while ((await partitionCount(topic)) < count) {
        if (Date.now() > deadline) throw new Error(`topic ${topic} did not reach ${count} partitions`);
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
      // The producer folds a partition it does not know into the ones it does (`partition %= count`),
      // so it must see the new partitions before the next produce.
      await producer.metadata({ topics: [topic], forceUpdate: true });
    },
    async produce(topic, records) {
      await producer.send({
        messages: records.map((r) => ({
          topic,
          ...(r.key !== undefined ? { key: r.key } : {}),
          value: typeof r.value === "string" ? r.value : JSON.stringify(r.value),
          ...(r.partition !== undefined ? { partition: r.partition } : {}),
          ...(r.headers ? { headers: r.headers } : {}),
        })),
      });
    },
    async configure(topic, configs) {
      await admin.alterConfigs({
        resources: [
          {
            resourceType: ConfigResourceTypes.TOPIC,
            resourceName: topic,
            configs: Object.entries(configs).map(([name, value]) => ({ name, value })),
          },
        ],
      });
    },
    async earliest(topic, partition) {
      return Number((await earliestOffsets(topic))[partition]);
    },
    async deleteRecords(topic, partition, offset) {
      await admin.deleteRecords({
        topics: [{ name: topic, partitions: [{ partition, offset: BigInt(offset) }] }],
      });
    },
    async restart() {
      await Promise.all([admin.close(), producer.close()]);
      const { port } = broker;
      await broker.stop();
      broker = await startKafkaBroker({ port, dataDir });
      ({ admin, producer } = clients());
    },
    async stop() {
      await Promise.all([admin.close().catch(() => undefined), producer.close().catch(() => undefined)]);
      await broker.stop();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
  return test;
}
