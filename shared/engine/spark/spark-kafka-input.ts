import type { KafkaOffsetRange, PlannedInput } from "../planned-input.ts";
import type { KafkaSource } from "../../pipeline/source-schema.ts";

/**
 * A `kafka` batch as the Spark job reads it (functions/spark/ebb_spark_kafka.py): the planned offsets
 * of each partition, exactly those the DuckDB path fetches (kafka-batch-plan.ts `plannedRanges`),
 * the broker's address and security as the source declares them, and how to decode the records into
 * the columns the DuckDB path gives the flow's SQL (kafka-source.ts `kafkaLayout`). Secrets travel as
 * the names of the environment variables that hold them, never as values.
 */
export interface SparkKafkaInput {
  readonly kind: "kafka";
  readonly ranges: readonly KafkaOffsetRange[];
  readonly keyFormat: KafkaSource["key_format"];
  readonly valueFormat: KafkaSource["value_format"];
  /** Declared fields of a JSON value and their DuckDB types: `value` is then a struct of them. */
  readonly schema: Readonly<Record<string, string>> | null;
  readonly connection: {
    readonly bootstrapServers: readonly string[];
    readonly protocol: KafkaSource["security"]["protocol"];
    readonly sasl: {
      readonly mechanism: "PLAIN" | "SCRAM-SHA-256" | "SCRAM-SHA-512";
      readonly username: string;
      readonly passwordEnv: string;
    } | null;
    /** The environment variable holding the CA certificates (PEM) to trust, or null for the JVM's. */
    readonly caEnv: string | null;
  };
}

export function sparkKafkaInput(input: Extract<PlannedInput, { kind: "kafka" }>): SparkKafkaInput {
  const { source } = input;
  const sasl = source.security.sasl;
  return {
    kind: "kafka",
    ranges: input.ranges,
    keyFormat: source.key_format,
    valueFormat: source.value_format,
    schema: source.schema ?? null,
    connection: {
      bootstrapServers: source.bootstrap_servers,
      protocol: source.security.protocol,
      // sparkKafkaUnsupported refuses AWS_MSK_IAM before a batch gets here.
      sasl:
        sasl && sasl.mechanism !== "AWS_MSK_IAM"
          ? { mechanism: sasl.mechanism, username: sasl.username!, passwordEnv: sasl.password_env! }
          : null,
      caEnv: source.security.tls?.ca_env ?? null,
    },
  };
}

/**
 * Why the Spark job cannot read this `kafka` source, or undefined when it can: the job reads with
 * Kafka's Java client, which has no MSK IAM signer on its class path and checks the broker's
 * certificate against the host it dials (no `server_name` of another name).
 */
export function sparkKafkaUnsupported(source: KafkaSource): string | undefined {
  if (source.security.sasl?.mechanism === "AWS_MSK_IAM")
    return "kafka sources signed with AWS_MSK_IAM run on DuckDB only, for now (the Spark job has no MSK IAM signer)";
  if (source.security.tls?.server_name !== undefined)
    return "kafka sources with tls.server_name run on DuckDB only, for now (the Spark job checks the certificate against the bootstrap host)";
  return undefined;
}
