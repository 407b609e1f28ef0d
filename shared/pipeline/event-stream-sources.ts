import { z } from "zod";
import { caseInsensitiveEnum, strictObject } from "./strict-object.ts";
import { columnTypeSchema } from "./column-type-schema.ts";
import { columnNameSchema } from "./identifier.ts";
import { parseTimestamp } from "./timestamp.ts";

/**
 * The event-stream sources (semantics.md "Pipeline, datasets, flows"): a Kafka topic (or several, or
 * a pattern) and a Kinesis stream. A record's value (Kafka) or data (Kinesis) is decoded as JSON with a
 * declared schema, as JSON, or kept as a string or bytes. Secrets never sit in a definition: a
 * password or CA certificate is named by the environment variable the task functions read it from.
 */

export const VALUE_FORMATS = ["json", "string", "bytes"] as const;

const valueFormatSchema = caseInsensitiveEnum(VALUE_FORMATS, (v) => v.toLowerCase()).default("string");
/** Declared fields of a JSON value and their DuckDB types (`{id: BIGINT, name: VARCHAR}`). */
const valueSchemaSchema = z.record(columnNameSchema(), columnTypeSchema);

/** Kafka's own rule for topic names. */
const TOPIC_NAME = /^[A-Za-z0-9._-]{1,249}$/;
const topicSchema = z.string().regex(TOPIC_NAME, {
  error: (issue) =>
    `topic ${JSON.stringify(issue.input)} is not a Kafka topic name: use letters, digits, ".", "_" and "-", at most 249 characters`,
});
const patternSchema = z.string().refine(
  (value) => {
    try {
      new RegExp(value);
      return true;
    } catch {
      return false;
    }
  },
  { error: (issue) => `pattern ${JSON.stringify(issue.input)} is not a regular expression` },
);

const HOST_PORT = /^[A-Za-z0-9.-]+:\d{1,5}$/;
const bootstrapSchema = z
  .union([z.string(), z.array(z.string()).min(1)], {
    error: 'bootstrap_servers is required: "host:port,host:port" or a list of host:port',
  })
  .transform((value) => (typeof value === "string" ? value.split(",").map((s) => s.trim()) : value))
  .pipe(
    z.array(
      z.string().regex(HOST_PORT, {
        error: (issue) => `bootstrap server ${JSON.stringify(issue.input)} is not host:port`,
      }),
    ),
  );

/** An environment variable of the task functions. */
const envNameSchema = z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, {
  error: (issue) => `${JSON.stringify(issue.input)} is not an environment variable name`,
});

export const SECURITY_PROTOCOLS = ["PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL"] as const;
export const SASL_MECHANISMS = ["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512", "AWS_MSK_IAM"] as const;

const saslSchema = strictObject({
  mechanism: caseInsensitiveEnum(SASL_MECHANISMS, (v) =>
    v.toUpperCase().replaceAll("_", "-").replace("AWS-MSK-IAM", "AWS_MSK_IAM"),
  ),
  username: z.string().min(1).optional(),
  /** The environment variable holding the password. */
  password_env: envNameSchema.optional(),
  /** AWS_MSK_IAM: the cluster's region. @default the functions' region */
  region: z.string().min(1).optional(),
}).superRefine((sasl, ctx) => {
  if (sasl.mechanism === "AWS_MSK_IAM") {
    for (const key of ["username", "password_env"] as const) {
      if (sasl[key] !== undefined)
        ctx.addIssue({
          code: "custom",
          path: [key],
          message: `AWS_MSK_IAM signs with the functions' IAM role: remove ${key}`,
        });
    }
    return;
  }
  for (const key of ["username", "password_env"] as const) {
    if (sasl[key] === undefined)
      ctx.addIssue({ code: "custom", path: [key], message: `${sasl.mechanism} needs ${key}` });
  }
  if (sasl.region !== undefined)
    ctx.addIssue({ code: "custom", path: ["region"], message: "region applies to AWS_MSK_IAM only" });
});

const tlsSchema = strictObject({
  /** The environment variable holding the CA certificates (PEM) to trust. @default the system's */
  ca_env: envNameSchema.optional(),
  /** The name to check the broker's certificate against. @default the bootstrap host */
  server_name: z.string().min(1).optional(),
});

export const kafkaSecuritySchema = strictObject({
  protocol: caseInsensitiveEnum(SECURITY_PROTOCOLS, (v) => v.toUpperCase()).default("PLAINTEXT"),
  sasl: saslSchema.optional(),
  tls: tlsSchema.optional(),
}).superRefine((security, ctx) => {
  const usesSasl = security.protocol.startsWith("SASL_");
  const usesTls = security.protocol.endsWith("SSL");
  if (usesSasl && !security.sasl)
    ctx.addIssue({
      code: "custom",
      path: ["sasl"],
      message: `protocol ${security.protocol} needs sasl: {mechanism, …}`,
    });
  if (!usesSasl && security.sasl)
    ctx.addIssue({
      code: "custom",
      path: ["sasl"],
      message: `sasl needs protocol SASL_SSL or SASL_PLAINTEXT, not ${security.protocol}`,
    });
  if (!usesTls && security.tls)
    ctx.addIssue({
      code: "custom",
      path: ["tls"],
      message: `tls needs protocol SSL or SASL_SSL, not ${security.protocol}`,
    });
  if (security.sasl?.mechanism === "AWS_MSK_IAM" && security.protocol !== "SASL_SSL")
    ctx.addIssue({
      code: "custom",
      path: ["protocol"],
      message: "AWS_MSK_IAM needs protocol SASL_SSL (MSK's IAM listener is TLS)",
    });
});

/** Where a partition starts: an offset, or its earliest or latest. */
const partitionStartSchema = z.union([z.number().int().nonnegative(), z.enum(["earliest", "latest"])]);

export const kafkaSourceSchema = strictObject({
  type: z.literal("kafka"),
  bootstrap_servers: bootstrapSchema,
  topic: topicSchema.optional(),
  topics: z.array(topicSchema).min(1).optional(),
  /** A regular expression a whole topic name must match; topics created later are picked up. */
  pattern: patternSchema.optional(),
  /**
   * Where a fresh checkpoint starts: `earliest` (every record the topic still holds), `latest`, or
   * per topic and partition (`{orders: {"0": 42, "1": "earliest"}}`; a partition not named starts at
   * its earliest). Partitions created later always start at their earliest.
   */
  starting_offsets: z
    .union([
      z.enum(["earliest", "latest"]),
      z.record(
        topicSchema,
        z.record(z.string().regex(/^\d+$/, { error: "partitions are numbers" }), partitionStartSchema),
      ),
    ])
    .default("earliest"),
  value_format: valueFormatSchema,
  /** With value_format json: the value's fields, as a STRUCT column `value`. */
  schema: valueSchemaSchema.optional(),
  /** Key and header values as text (default) or bytes. */
  key_format: z.enum(["string", "bytes"]).default("string"),
  security: kafkaSecuritySchema.default({ protocol: "PLAINTEXT" }),
}).superRefine((source, ctx) => {
  const given = (["topic", "topics", "pattern"] as const).filter((key) => source[key] !== undefined);
  if (given.length !== 1) {
    ctx.addIssue({
      code: "custom",
      path: given.length === 0 ? ["topic"] : [given[1]!],
      message: "set exactly one of topic, topics and pattern",
    });
  }
  schemaNeedsJson(source, ctx);
});

export const KINESIS_POSITIONS = ["TRIM_HORIZON", "LATEST", "AT_TIMESTAMP"] as const;
const STREAM_ARN = /^arn:aws[a-z-]*:kinesis:([a-z0-9-]+):(\d{12}):stream\/([A-Za-z0-9_.-]{1,128})$/;
const STREAM_NAME = /^[A-Za-z0-9_.-]{1,128}$/;

export const kinesisSourceSchema = strictObject({
  type: z.literal("kinesis"),
  /** The stream's name or ARN. */
  stream: z.string().refine((v) => STREAM_NAME.test(v) || STREAM_ARN.test(v), {
    error: (issue) =>
      `stream ${JSON.stringify(issue.input)} is neither a Kinesis stream name nor a stream ARN`,
  }),
  /** @default the ARN's region, else the functions' */
  region: z.string().min(1).optional(),
  /** A Kinesis endpoint other than AWS's (a VPC endpoint, or an emulator when running locally). */
  endpoint: z.url().optional(),
  /** Where a fresh checkpoint starts in each shard. */
  starting_position: caseInsensitiveEnum(KINESIS_POSITIONS, (v) => v.toUpperCase()).default("TRIM_HORIZON"),
  /** With AT_TIMESTAMP: the time. */
  starting_timestamp: z
    .string()
    .refine((v) => parseTimestamp(v) !== undefined, {
      error: (issue) =>
        `${JSON.stringify(issue.input)} is not a timestamp: use UTC "yyyy-MM-dd HH:mm:ss" or ISO-8601 with a zone`,
    })
    .optional(),
  data_format: valueFormatSchema,
  /** With data_format json: the data's fields, as a STRUCT column `data`. */
  schema: valueSchemaSchema.optional(),
}).superRefine((source, ctx) => {
  if ((source.starting_position === "AT_TIMESTAMP") !== (source.starting_timestamp !== undefined)) {
    ctx.addIssue({
      code: "custom",
      path: ["starting_timestamp"],
      message: "starting_timestamp goes with starting_position AT_TIMESTAMP, and AT_TIMESTAMP needs it",
    });
  }
  schemaNeedsJson({ value_format: source.data_format, schema: source.schema }, ctx);
});

function schemaNeedsJson(source: { value_format: string; schema?: unknown }, ctx: z.RefinementCtx): void {
  if (source.schema !== undefined && source.value_format !== "json") {
    ctx.addIssue({
      code: "custom",
      path: ["schema"],
      message: "schema applies to JSON values: set the format to json",
    });
  }
}

/** The stream's name, from a name or an ARN. */
export function kinesisStreamName(stream: string): string {
  return STREAM_ARN.exec(stream)?.[3] ?? stream;
}

/** The region an ARN names, if it is one. */
export function kinesisStreamRegion(stream: string): string | undefined {
  return STREAM_ARN.exec(stream)?.[1];
}

export type KafkaSource = z.infer<typeof kafkaSourceSchema>;
export type KinesisSource = z.infer<typeof kinesisSourceSchema>;
