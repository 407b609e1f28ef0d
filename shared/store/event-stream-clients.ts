import type { EventStreams } from "../engine/event-streams.ts";
import { PlatformaticKafkaTopics } from "./kafka-topics.ts";
import { SdkKinesisStream } from "./kinesis-shards.ts";

/** The event streams a source's settings name, reached over the network (AWS and the local runtime alike). */
export const networkEventStreams: EventStreams = {
  kafka: (source) => new PlatformaticKafkaTopics(source),
  kinesis: (source) => new SdkKinesisStream(source),
};
