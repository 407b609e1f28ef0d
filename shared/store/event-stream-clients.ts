import type { KafkaTopics, EventStreams, KinesisStream } from "./event-streams.ts";
import type { KafkaSource, KinesisSource } from "../pipeline/source-schema.ts";

/**
 * The event streams a source's settings name, reached over the network (AWS and the local runtime
 * alike). Each client library loads on its first call, not with the module: the Kafka client compiles
 * its protocol schemas when imported (seconds), which every function's cold start would otherwise pay
 * whether or not a pipeline reads Kafka.
 */
export const networkEventStreams: EventStreams = {
  kafka: (source) => new LazyKafkaTopics(source),
  kinesis: (source) => new LazyKinesisStream(source),
};

class LazyKafkaTopics implements KafkaTopics {
  #client: Promise<KafkaTopics> | undefined;

  constructor(private readonly source: KafkaSource) {}

  #open(): Promise<KafkaTopics> {
    return (this.#client ??= import("./kafka-topics.ts").then(
      ({ PlatformaticKafkaTopics }) => new PlatformaticKafkaTopics(this.source),
    ));
  }

  async partitions() {
    return (await this.#open()).partitions();
  }

  async *read(topic: string, partition: number, from: number, until: number) {
    yield* (await this.#open()).read(topic, partition, from, until);
  }

  async retention(topic: string) {
    return (await this.#open()).retention(topic);
  }

  async close() {
    if (this.#client) await (await this.#client).close();
  }
}

class LazyKinesisStream implements KinesisStream {
  #client: Promise<KinesisStream> | undefined;

  constructor(private readonly source: KinesisSource) {}

  #open(): Promise<KinesisStream> {
    return (this.#client ??= import("./kinesis-shards.ts").then(
      ({ SdkKinesisStream }) => new SdkKinesisStream(this.source),
    ));
  }

  async shards() {
    return (await this.#open()).shards();
  }

  async read(...args: Parameters<KinesisStream["read"]>) {
    return (await this.#open()).read(...args);
  }

  async retentionMs() {
    return (await this.#open()).retentionMs();
  }

  async close() {
    if (this.#client) await (await this.#client).close();
  }
}
