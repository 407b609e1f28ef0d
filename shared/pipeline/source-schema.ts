import { z } from "zod";
import { caseInsensitiveEnum, strictObject } from "./strict-object.ts";
import { columnNameSchema, identifierSchema } from "./identifier.ts";
import { columnTypeSchema } from "./column-type-schema.ts";
import { kafkaSourceSchema, kinesisSourceSchema } from "./event-stream-sources.ts";

export { kinesisStreamName, kinesisStreamRegion } from "./event-stream-sources.ts";
export type { KafkaSource, KinesisSource } from "./event-stream-sources.ts";

/**
 * Where a flow reads from (semantics.md "Pipeline, datasets, flows"): another dataset of this pipeline
 * as a stream, an external Delta table by path, files landing under a prefix, or an event stream
 * (Kafka, Kinesis: `event-stream-sources.ts`).
 */

/** `s3://bucket[/prefix]`: bucket names as S3 allows them (3–63 of a-z, 0-9, `.`, `-`). */
// Any key after the bucket: control characters in it are refused with their own code
// (source-location-policy.ts).
const S3_URI = /^s3:\/\/[a-z0-9][a-z0-9.-]{1,61}[a-z0-9](\/[\s\S]*)?$/;

/** A location outside the pipeline: an S3 URI, or an absolute folder when Ebb runs locally. */
export function isSourceLocation(path: string): boolean {
  if (path.split("/").some((segment) => segment === "..")) return false;
  return S3_URI.test(path) || (path.startsWith("/") && path.length > 1);
}

const locationSchema = z.string().refine(isSourceLocation, {
  error: (issue) =>
    `path ${JSON.stringify(issue.input)} is not a location Ebb can read: use s3://<bucket>/<prefix> (or an absolute local folder when running locally), without ".." segments`,
});

export const AUTO_LOADER_FORMATS = ["json", "csv", "parquet"] as const;

export const streamSourceSchema = strictObject({
  type: z.literal("stream"),
  /** A dataset of this pipeline (a streaming table), read incrementally version by version. */
  dataset: identifierSchema("dataset"),
});

export const deltaSourceSchema = strictObject({
  type: z.literal("delta"),
  /** A Delta table Ebb does not own, read incrementally version by version. */
  path: locationSchema,
});

export const autoLoaderSourceSchema = strictObject({
  type: z.literal("auto_loader"),
  /** The prefix files land under; every file below it is read once. */
  path: locationSchema,
  format: caseInsensitiveEnum(AUTO_LOADER_FORMATS, (v) => v.toLowerCase()),
  /** Declared columns and their DuckDB types, in file order (`{id: BIGINT, name: VARCHAR}`). */
  schema: z.record(columnNameSchema(), columnTypeSchema).optional(),
});

export const sourceSchema = z.discriminatedUnion("type", [
  streamSourceSchema,
  deltaSourceSchema,
  autoLoaderSourceSchema,
  kafkaSourceSchema,
  kinesisSourceSchema,
]);

export type StreamSource = z.infer<typeof streamSourceSchema>;
export type DeltaSource = z.infer<typeof deltaSourceSchema>;
export type AutoLoaderSource = z.infer<typeof autoLoaderSourceSchema>;
export type Source = z.infer<typeof sourceSchema>;
export type SourceType = Source["type"];
