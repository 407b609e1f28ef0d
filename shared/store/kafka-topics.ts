import { readFileSync } from "node:fs";
import type { ConnectionOptions as TlsOptions } from "node:tls";
import {
  Admin,
  AuthenticationError,
  ConfigResourceTypes,
  Consumer,
  GenericError,
  ListOffsetTimestamps,
  NetworkError,
  ProtocolError,
} from "@platformatic/kafka";
import {
  KafkaOffsetsGoneError,
  type KafkaPartitionRange,
  type KafkaRetention,
  type KafkaRecord,
  type KafkaTopics,
} from "./event-streams.ts";
import type { KafkaSource } from "../pipeline/source-schema.ts";
import { SourceSettingsError, SourceUnavailableError } from "./errors.ts";
import { mskIamToken } from "./msk-iam-token.ts";

/**
 * The Kafka adapter on `@platformatic/kafka`: a pure-JavaScript client, maintained, typed, with the
 * low-level calls a checkpointed reader needs (Metadata, ListOffsets, Fetch at an offset) and no
 * consumer group: Ebb's checkpoints are the offsets, so nothing is committed to the broker.
 */

/** Bytes asked of a partition per fetch. */
const FETCH_BYTES = 4 << 20;
/** How long one fetch may wait for records the planned range promises. */
const FETCH_WAIT_MS = 500;

export class PlatformaticKafkaTopics implements KafkaTopics {
  readonly #source: KafkaSource;
  readonly #consumer: Consumer;
  readonly #admin: Admin;

  constructor(source: KafkaSource, env: NodeJS.ProcessEnv = process.env) {
    this.#source = source;
    const options = {
      clientId: "ebb",
      bootstrapBrokers: source.bootstrap_servers,
      retries: 3,
      retryDelay: 500,
      connectTimeout: 5_000,
      requestTimeout: 30_000,
      ...connectionSecurity(source, env),
    };
    this.#consumer = new Consumer({ ...options, groupId: "ebb-reader" });
    this.#admin = new Admin(options);
  }

  async partitions(): Promise<KafkaPartitionRange[]> {
    return this.#reach(async () => {
      const topics = await this.#topics();
      if (topics.length === 0) return [];
      // Forced: a partition or topic created since the last look must be seen.
      await this.#consumer.metadata({ topics, forceUpdate: true });
      const [earliest, end] = await Promise.all([
        this.#consumer.listOffsets({ topics, timestamp: ListOffsetTimestamps.EARLIEST }),
        this.#consumer.listOffsets({ topics, timestamp: ListOffsetTimestamps.LATEST }),
      ]);
      const ranges: KafkaPartitionRange[] = [];
      for (const topic of topics) {
        (end.get(topic) ?? []).forEach((last, partition) => {
          const first = earliest.get(topic)?.[partition] ?? 0n;
          ranges.push({ topic, partition, earliest: Number(first), end: Number(last) });
        });
      }
      return ranges;
    });
  }

  async *read(topic: string, partition: number, from: number, until: number): AsyncIterable<KafkaRecord[]> {
    let next = from;
    while (next < until) {
      const metadata = await this.#reach(() => this.#consumer.metadata({ topics: [topic] }));
      const info = metadata.topics.get(topic)?.partitions[partition];
      if (!info) throw new Error(`Kafka topic ${topic} has no partition ${partition}`);
      const response = await this.#reach(() =>
        this.#consumer.fetch({
          node: info.leader,
          maxWaitTime: FETCH_WAIT_MS,
          minBytes: 1,
          maxBytes: FETCH_BYTES,
          topics: [
            {
              topicId: metadata.topics.get(topic)!.id,
              partitions: [
                {
                  partition,
                  fetchOffset: BigInt(next),
                  partitionMaxBytes: FETCH_BYTES,
                  currentLeaderEpoch: -1,
                  lastFetchedEpoch: -1,
                },
              ],
            },
          ],
        }),
      );
      const answer = response.responses[0]?.partitions[0];
      if (!answer) throw new Error(`Kafka answered no data for ${topic}/${partition}`);
      if (answer.errorCode !== 0 && retriableCode(answer.errorCode))
        throw this.#unavailable(new ProtocolError(answer.errorCode));
      if (answer.errorCode !== 0)
        throw new Error(
          `Kafka refused to fetch ${topic}/${partition} at offset ${next} (error code ${answer.errorCode})`,
        );
      if (next < Number(answer.logStartOffset)) {
        throw new KafkaOffsetsGoneError(topic, partition, next, Number(answer.logStartOffset));
      }
      const records: KafkaRecord[] = [];
      let last = next - 1;
      for (const batch of answer.records ?? []) {
        const control = (batch.attributes & 0x20) !== 0;
        for (const record of batch.records) {
          const offset = Number(batch.firstOffset) + record.offsetDelta;
          last = Math.max(last, offset);
          if (control || offset < next || offset >= until) continue;
          records.push({
            offset,
            key: record.key,
            value: record.value,
            timestamp: Number(batch.firstTimestamp + record.timestampDelta),
            headers: record.headers.map(([key, value]) => ({
              key: key?.toString("utf8") ?? "",
              value: value?.toString("utf8") ?? null,
            })),
          });
        }
        // A batch of only control records (transaction markers) still moves the position.
        last = Math.max(last, Number(batch.firstOffset) + batch.lastOffsetDelta);
      }
      if (last < next) {
        if (Number(answer.highWatermark) <= next)
          throw new Error(
            `Kafka ${topic}/${partition} ends at ${answer.highWatermark}, before the planned offset ${until}`,
          );
        continue;
      }
      next = last + 1;
      if (records.length > 0) yield records;
    }
  }

  async retention(topic: string): Promise<KafkaRetention> {
    const keys = ["retention.ms", "retention.bytes"];
    const [description] = await this.#reach(() =>
      this.#admin.describeConfigs({
        resources: [
          { resourceType: ConfigResourceTypes.TOPIC, resourceName: topic, configurationKeys: keys },
        ],
      }),
    );
    // `-1` is no limit; a value the broker did not answer is not known: both leave the field out.
    const limit = (name: string): number | undefined => {
      const value = Number(description?.configs.find((c) => c.name === name)?.value ?? NaN);
      return Number.isFinite(value) && value >= 0 ? value : undefined;
    };
    const ms = limit("retention.ms");
    const bytes = limit("retention.bytes");
    return { ...(ms !== undefined ? { ms } : {}), ...(bytes !== undefined ? { bytes } : {}) };
  }

  async close(): Promise<void> {
    await Promise.all([this.#consumer.close(true), this.#admin.close()]);
  }

  /** Runs a call to the cluster; a broker it could not reach, or one that cannot serve yet, is `SourceUnavailableError`. */
  async #reach<T>(call: () => Promise<T>): Promise<T> {
    try {
      return await call();
    } catch (error) {
      throw transient(error) ? this.#unavailable(error) : error;
    }
  }

  #unavailable(cause: unknown): SourceUnavailableError {
    const servers = this.#source.bootstrap_servers.join(",");
    return new SourceUnavailableError(
      `Kafka at ${servers} could not serve the read (${cause instanceof Error ? cause.message : String(cause)}): check that the brokers are up and reachable from Ebb at the source's bootstrap_servers (an update retries this for about 30 seconds before it fails)`,
      { cause },
    );
  }

  async #topics(): Promise<string[]> {
    const source = this.#source;
    if (source.topic !== undefined) return [source.topic];
    if (source.topics !== undefined) return [...source.topics];
    // A pattern must match the whole name, as Spark's subscribePattern does.
    const pattern = new RegExp(`^(?:${source.pattern})$`);
    return (await this.#admin.listTopics()).filter((topic) => pattern.test(topic)).sort();
  }
}

/**
 * What a restart or a moving leader looks like to the client: the connection failed or timed out
 * (`PLT_KFK_NETWORK`, after the client's own retries), or the broker answered with an error its
 * protocol marks retriable (LEADER_NOT_AVAILABLE, NOT_LEADER_OR_FOLLOWER, …), anywhere in the
 * client's list of attempts. An authentication or a settings error is not.
 */
function transient(error: unknown): boolean {
  if (!GenericError.isGenericError(error as Error)) return false;
  const found = error as GenericError;
  if (found.findBy("code", AuthenticationError.code)) return false;
  return found.findBy("code", NetworkError.code) !== null || found.findBy("canRetry", true) !== null;
}

/** Whether the protocol marks a partition's error code retriable; a code the client does not know is not. */
function retriableCode(code: number): boolean {
  try {
    return new ProtocolError(code).canRetry === true;
  } catch {
    return false;
  }
}

/** TLS and SASL options from the source's `security` settings; secrets read from the environment. */
export function connectionSecurity(source: KafkaSource, env: NodeJS.ProcessEnv) {
  const { protocol, sasl, tls } = source.security;
  const usesTls = protocol === "SSL" || protocol === "SASL_SSL";
  const tlsOptions: TlsOptions = {
    ...(tls?.ca_env ? { ca: requiredEnv(env, tls.ca_env) } : {}),
    ...(tls?.server_name ? { servername: tls.server_name } : {}),
  };
  const host = source.bootstrap_servers[0]!.split(":")[0]!;
  const saslOptions = !sasl
    ? undefined
    : sasl.mechanism === "AWS_MSK_IAM"
      ? {
          mechanism: "OAUTHBEARER" as const,
          token: () => mskIamToken({ region: sasl.region ?? env["AWS_REGION"] ?? regionOfMskHost(host) }),
        }
      : {
          mechanism: sasl.mechanism,
          username: sasl.username!,
          password: () => requiredEnv(env, sasl.password_env!),
        };
  return {
    ...(usesTls ? { tls: tlsOptions } : {}),
    ...(saslOptions ? { sasl: saslOptions } : {}),
  };
}

function requiredEnv(env: NodeJS.ProcessEnv, name: string): string {
  const value = env[name];
  if (value === undefined || value === "")
    throw new SourceSettingsError(
      `the Kafka source's settings name the environment variable ${name}, which is not set: set it where Ebb runs, or change the source's settings`,
      { data: { variable: name } },
    );
  // A CA given as a file path is read; otherwise the variable holds the PEM itself.
  return value.startsWith("/") && !value.includes("BEGIN") ? readFileSync(value, "utf8") : value;
}

/** `b-1.mycluster.abc123.c2.kafka.eu-west-1.amazonaws.com` is in eu-west-1. */
function regionOfMskHost(host: string): string {
  const match = /\.kafka(?:-serverless)?\.([a-z0-9-]+)\.amazonaws\.com$/.exec(host);
  if (!match)
    throw new SourceSettingsError(`AWS_MSK_IAM: ${host} names no AWS region: set sasl.region in the source`, {
      data: { host },
    });
  return match[1]!;
}
