import { kafkaLibs } from "./kafka-artifacts.ts";

/** `tsx infra/local/kafka-artifacts-main.ts`: fetches the Kafka broker's jars (CI does it before the tests). */
console.log(`kafka: jars in ${await kafkaLibs()}`);
