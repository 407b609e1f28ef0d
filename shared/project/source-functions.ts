import { PROJECT_ISSUE_CODES, StatementProblem } from "./errors.ts";
import type { ArgumentValue, SourceCall } from "./query-scan.ts";
import { sparkSchemaColumns } from "./spark-schema.ts";

/**
 * Databricks' streaming source functions as Ebb's flow sources (source-schema.ts):
 *
 * - `read_files(path, format => 'json', schema => '…')` (Auto Loader) → `auto_loader`; its
 *   `maxFilesPerTrigger`, `maxBytesPerTrigger` and `useIncrementalListing` (with or without the
 *   `cloudFiles.` prefix) → the flow's options.
 * - `read_kafka(bootstrapServers => …, subscribe | subscribePattern => …, startingOffsets => …)` →
 *   `kafka`; `maxOffsetsPerTrigger` → `max_offsets_per_batch`.
 * - `read_kinesis(streamName => …, region => …, initialPosition => …)` → `kinesis`.
 * - `delta.\`path\`` → `delta`.
 *
 * An option Ebb does not carry out is refused by name, never dropped.
 */

export interface MappedSource {
  readonly source: Record<string, unknown>;
  readonly options: Record<string, unknown>;
}

const unsupported = (at: number, message: string) =>
  new StatementProblem(at, PROJECT_ISSUE_CODES.unsupportedClause, message);

export function sourceOfCall(call: SourceCall): MappedSource {
  switch (call.name.toLowerCase()) {
    case "read_files":
    case "cloud_files":
      return readFiles(call);
    case "read_kafka":
      return readKafka(call);
    case "read_kinesis":
      return readKinesis(call);
    default:
      throw unsupported(
        call.start,
        `${call.name} is not a streaming source Ebb reads: use read_files, read_kafka, read_kinesis, a table of this project or delta.\`<path>\``,
      );
  }
}

/**
 * Spark SQL's path tables of files (`json.\`s3://…\``), streamed as auto_loader with inferred columns.
 * Open-source SDP 4.3 reads them as a batch relation (and refuses one under STREAM in a streaming
 * table); Ebb streams them, as Databricks streams read_files.
 */
export const FILE_FORMATS = ["json", "csv", "parquet"] as const;

/** `json.\`s3://bucket/prefix/\``: files under a prefix, each read once. */
export function filePathSource(format: string, path: string): MappedSource {
  return { source: { type: "auto_loader", path, format: format.toLowerCase() }, options: {} };
}

/** `delta.\`s3://bucket/table\``: an external Delta table read version by version. */
export function deltaPathSource(path: string): MappedSource {
  return { source: { type: "delta", path }, options: {} };
}

function options(call: SourceCall, known: readonly string[]): Map<string, ArgumentValue> {
  const given = new Map<string, ArgumentValue>();
  for (const [key, value] of Object.entries(call.named)) {
    const bare = key.toLowerCase().replace(/^cloudfiles\./, "");
    const match = known.find((k) => k.toLowerCase() === bare);
    if (match === undefined)
      throw unsupported(
        value.start,
        `${call.name} option ${key} is not carried out by Ebb (it reads ${known.join(", ")})`,
      );
    given.set(match, value);
  }
  return given;
}

function positiveInteger(value: ArgumentValue, what: string): number {
  const n = Number(value.value);
  if (!Number.isInteger(n) || n <= 0)
    throw unsupported(value.start, `${what} is a whole number above 0, not ${value.value}`);
  return n;
}

function readFiles(call: SourceCall): MappedSource {
  const given = options(call, [
    "format",
    "schema",
    "maxFilesPerTrigger",
    "maxBytesPerTrigger",
    "useIncrementalListing",
    "path",
  ]);
  const path = call.positional[0] ?? given.get("path");
  if (path === undefined || path.kind !== "string")
    throw new StatementProblem(
      call.start,
      PROJECT_ISSUE_CODES.syntaxError,
      `${call.name} needs the files' location as its first argument: read_files('s3://bucket/prefix/', format => 'json')`,
    );
  if (call.positional.length > 1)
    throw unsupported(
      call.positional[1]!.start,
      `${call.name} takes one location; name the other arguments (format => 'json')`,
    );
  const format = given.get("format");
  if (format === undefined)
    throw unsupported(
      call.start,
      `${call.name} needs format => 'json' | 'csv' | 'parquet' (Ebb does not infer the format)`,
    );
  const source: Record<string, unknown> = { type: "auto_loader", path: path.value, format: format.value };
  const schema = given.get("schema");
  if (schema !== undefined) {
    const columns = sparkSchemaColumns(schema.value);
    if (!columns.ok)
      throw new StatementProblem(
        schema.start,
        PROJECT_ISSUE_CODES.syntaxError,
        `schema is not a Spark DDL schema: ${columns.message}`,
      );
    source["schema"] = columns.columns;
  }
  const flowOptions: Record<string, unknown> = {};
  const maxFiles = given.get("maxFilesPerTrigger");
  if (maxFiles) flowOptions["max_files_per_batch"] = positiveInteger(maxFiles, "maxFilesPerTrigger");
  const maxBytes = given.get("maxBytesPerTrigger");
  if (maxBytes)
    flowOptions["max_bytes_per_batch"] = maxBytes.kind === "number" ? Number(maxBytes.value) : maxBytes.value;
  const listing = given.get("useIncrementalListing");
  if (listing) flowOptions["use_incremental_listing"] = listing.value;
  return { source, options: flowOptions };
}

function readKafka(call: SourceCall): MappedSource {
  const given = options(call, [
    "bootstrapServers",
    "subscribe",
    "subscribePattern",
    "assign",
    "startingOffsets",
    "maxOffsetsPerTrigger",
  ]);
  if (given.has("assign"))
    throw unsupported(
      given.get("assign")!.start,
      "assign is not carried out by Ebb: use subscribe or subscribePattern",
    );
  const servers = given.get("bootstrapServers");
  if (servers === undefined)
    throw new StatementProblem(
      call.start,
      PROJECT_ISSUE_CODES.syntaxError,
      "read_kafka needs bootstrapServers => 'host:port'",
    );
  const source: Record<string, unknown> = { type: "kafka", bootstrap_servers: servers.value };
  const subscribe = given.get("subscribe");
  if (subscribe !== undefined) {
    const topics = subscribe.value.split(",").map((t) => t.trim());
    if (topics.length === 1) source["topic"] = topics[0];
    else source["topics"] = topics;
  }
  const pattern = given.get("subscribePattern");
  if (pattern !== undefined) source["pattern"] = pattern.value;
  const starting = given.get("startingOffsets");
  if (starting !== undefined) source["starting_offsets"] = startingOffsets(starting);
  const flowOptions: Record<string, unknown> = {};
  const maxOffsets = given.get("maxOffsetsPerTrigger");
  if (maxOffsets) flowOptions["max_offsets_per_batch"] = positiveInteger(maxOffsets, "maxOffsetsPerTrigger");
  return { source, options: flowOptions };
}

/** `earliest`, `latest`, or Spark's JSON `{"topic": {"0": 42, "1": -2}}` (-2 earliest, -1 latest). */
function startingOffsets(value: ArgumentValue): unknown {
  const text = value.value.trim();
  if (!text.startsWith("{")) return text.toLowerCase();
  try {
    const parsed = JSON.parse(text) as Record<string, Record<string, number>>;
    return Object.fromEntries(
      Object.entries(parsed).map(([topic, partitions]) => [
        topic,
        Object.fromEntries(
          Object.entries(partitions).map(([p, o]) => [p, o === -2 ? "earliest" : o === -1 ? "latest" : o]),
        ),
      ]),
    );
  } catch {
    throw new StatementProblem(
      value.start,
      PROJECT_ISSUE_CODES.syntaxError,
      "startingOffsets is earliest, latest or Spark's JSON of offsets per topic and partition",
    );
  }
}

function readKinesis(call: SourceCall): MappedSource {
  const given = options(call, ["streamName", "region", "initialPosition", "endpoint"]);
  const stream = given.get("streamName");
  if (stream === undefined)
    throw new StatementProblem(
      call.start,
      PROJECT_ISSUE_CODES.syntaxError,
      "read_kinesis needs streamName => '<stream>'",
    );
  const source: Record<string, unknown> = { type: "kinesis", stream: stream.value };
  const region = given.get("region");
  if (region !== undefined) source["region"] = region.value;
  const endpoint = given.get("endpoint");
  if (endpoint !== undefined) source["endpoint"] = endpoint.value;
  const position = given.get("initialPosition");
  if (position !== undefined) {
    const text = position.value.trim();
    if (text.startsWith("{"))
      throw unsupported(
        position.start,
        "initialPosition at_timestamp as JSON is not read yet: use trim_horizon or latest",
      );
    source["starting_position"] = text === "earliest" ? "TRIM_HORIZON" : text.toUpperCase();
  }
  return { source, options: {} };
}
