import { describe, expect, it } from "vitest";
import { parseDefinition } from "../../../shared/pipeline/parse-definition.ts";
import { DefinitionError, type DefinitionIssue } from "../../../shared/pipeline/errors.ts";

/** The kafka and kinesis source settings: what is accepted, normalized, and refused with a path. */

const pipeline = (source: Record<string, unknown>, options?: Record<string, unknown>) => ({
  name: "streams",
  catalog: "main",
  schema: "events",
  datasets: [
    {
      type: "streaming_table",
      name: "raw",
      flows: [{ name: "ingest", source, sql: "SELECT * FROM source", ...(options ? { options } : {}) }],
    },
  ],
});

function issuesOf(definition: unknown): DefinitionIssue[] {
  try {
    parseDefinition(definition);
  } catch (error) {
    expect(error).toBeInstanceOf(DefinitionError);
    return [...(error as DefinitionError).issues];
  }
  throw new Error("expected a DefinitionError");
}

const kafka = { type: "kafka", bootstrap_servers: "b-1.msk:9098,b-2.msk:9098", topic: "orders" };

describe("the kafka source", () => {
  it("fills its defaults and splits bootstrap_servers", () => {
    const source = parseDefinition(pipeline(kafka)).datasets[0]!;
    expect(source.type === "streaming_table" && source.flows[0]!.source).toEqual({
      ...kafka,
      bootstrap_servers: ["b-1.msk:9098", "b-2.msk:9098"],
      starting_offsets: "earliest",
      value_format: "string",
      key_format: "string",
      security: { protocol: "PLAINTEXT" },
    });
  });

  it.each([
    [{ ...kafka, topics: ["a"] }, "topics", "set exactly one of topic, topics and pattern"],
    [{ type: "kafka", bootstrap_servers: "b:1" }, "topic", "set exactly one of topic, topics and pattern"],
    [{ ...kafka, topic: "no/slash" }, "topic", "is not a Kafka topic name"],
    [
      { ...kafka, pattern: undefined, topic: undefined, topics: undefined, bootstrap_servers: "nohost" },
      "bootstrap_servers",
      "is not host:port",
    ],
    [{ ...kafka, schema: { id: "BIGINT" } }, "schema", "set the format to json"],
    [{ ...kafka, security: { protocol: "SASL_SSL" } }, "security.sasl", "needs sasl"],
    [
      { ...kafka, security: { protocol: "SASL_SSL", sasl: { mechanism: "scram-sha-512", username: "u" } } },
      "security.sasl.password_env",
      "needs password_env",
    ],
    [
      { ...kafka, security: { protocol: "SASL_PLAINTEXT", sasl: { mechanism: "AWS_MSK_IAM" } } },
      "security.protocol",
      "AWS_MSK_IAM needs protocol SASL_SSL",
    ],
    [
      { ...kafka, security: { protocol: "PLAINTEXT", tls: { server_name: "x" } } },
      "security.tls",
      "tls needs protocol SSL",
    ],
    [
      { ...kafka, security: { protocol: "SSL", tls: { ca: "inline" } } },
      "security.tls",
      'unknown field "ca"',
    ],
    [{ ...kafka, starting_offsets: { orders: { zero: 1 } } }, "starting_offsets", ""],
    [
      { ...kafka, value_format: "json", schema: { id: "BIGINT); COPY t TO '/x'; --" } },
      "schema.id",
      "is not a column type",
    ],
  ])("refuses %j at %s", (source, path, message) => {
    const issues = issuesOf(pipeline(source));
    expect(issues.some((i) => i.path.includes(path) && i.message.includes(message))).toBe(true);
  });

  it("accepts SCRAM with a password from the environment, MSK IAM, and per-partition starts", () => {
    const scram = {
      protocol: "sasl_ssl",
      sasl: { mechanism: "SCRAM-SHA-512", username: "ebb", password_env: "KAFKA_PASSWORD" },
    };
    expect(() => parseDefinition(pipeline({ ...kafka, security: scram }))).not.toThrow();
    const iam = { protocol: "SASL_SSL", sasl: { mechanism: "aws_msk_iam", region: "eu-west-1" } };
    expect(() => parseDefinition(pipeline({ ...kafka, security: iam }))).not.toThrow();
    const starts = { orders: { "0": 42, "1": "latest" } };
    expect(() => parseDefinition(pipeline({ ...kafka, starting_offsets: starts }))).not.toThrow();
  });

  it("takes max_offsets_per_batch, and refuses starting_version, which is for table sources", () => {
    expect(() => parseDefinition(pipeline(kafka, { max_offsets_per_batch: 100 }))).not.toThrow();
    const issues = issuesOf(pipeline(kafka, { starting_version: 3 }));
    expect(issues[0]!.message).toMatch(/starts where source.starting_offsets says/);
    const onFiles = issuesOf(
      pipeline({ type: "auto_loader", path: "s3://landing/x", format: "json" }, { max_offsets_per_batch: 5 }),
    );
    expect(onFiles[0]!.message).toMatch(/applies to kafka and kinesis sources/);
  });

  it("bounds batches by bytes on files and tables, given as bytes or a size, and refuses it on an event stream", () => {
    const files = { type: "auto_loader", path: "s3://landing/x", format: "json" };
    const optionsOf = (options: Record<string, unknown>) => {
      const dataset = parseDefinition(pipeline(files, options)).datasets[0]!;
      return dataset.type === "streaming_table" ? dataset.flows[0]!.options : undefined;
    };
    expect(optionsOf({ max_bytes_per_batch: "256MB" })?.max_bytes_per_batch).toBe(256 * 1024 ** 2);
    expect(optionsOf({ max_bytes_per_batch: "1g" })?.max_bytes_per_batch).toBe(1024 ** 3);
    expect(optionsOf({ max_bytes_per_batch: 4096 })?.max_bytes_per_batch).toBe(4096);
    for (const bad of ["lots", 0, -5, 1.5, "12 parsecs"]) {
      expect(issuesOf(pipeline(files, { max_bytes_per_batch: bad }))[0]!.message).toBe(
        `${JSON.stringify(bad)} is not a size: give a whole number of bytes or a size such as "256MB" or "1g"`,
      );
    }
    expect(issuesOf(pipeline(kafka, { max_bytes_per_batch: "1g" }))[0]!.message).toMatch(
      /^max_bytes_per_batch applies to auto_loader, stream and delta sources .*bound it with max_offsets_per_batch$/,
    );
  });
});

describe("the kinesis source", () => {
  const kinesis = { type: "kinesis", stream: "arn:aws:kinesis:eu-west-1:123456789012:stream/clicks" };

  it("takes a name or an ARN, TRIM_HORIZON by default", () => {
    const dataset = parseDefinition(pipeline(kinesis)).datasets[0]!;
    expect(dataset.type === "streaming_table" && dataset.flows[0]!.source).toMatchObject({
      starting_position: "TRIM_HORIZON",
      data_format: "string",
    });
    expect(() => parseDefinition(pipeline({ type: "kinesis", stream: "clicks" }))).not.toThrow();
  });

  it.each([
    [
      { ...kinesis, stream: "arn:aws:s3:::bucket" },
      "stream",
      "neither a Kinesis stream name nor a stream ARN",
    ],
    [{ ...kinesis, starting_position: "AT_TIMESTAMP" }, "starting_timestamp", "AT_TIMESTAMP needs it"],
    [
      { ...kinesis, starting_timestamp: "2026-01-01 00:00:00" },
      "starting_timestamp",
      "goes with starting_position AT_TIMESTAMP",
    ],
    [{ ...kinesis, endpoint: "not a url" }, "endpoint", ""],
  ])("refuses %j at %s", (source, path, message) => {
    const issues = issuesOf(pipeline(source));
    expect(issues.some((i) => i.path.includes(path) && i.message.includes(message))).toBe(true);
  });
});
