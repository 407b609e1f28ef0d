import { quoteLiteral } from "../../duck/sql-text.ts";
import { SchemaError } from "../errors.ts";
import { duckType, type ScalarType } from "./schema.ts";

/**
 * Partition values are strings in the log (PROTOCOL.md "Partition Value Serialization"); this turns
 * one back into a typed DuckDB SQL expression for its column's type. The value in the log is the
 * raw value: escaping (`%2F`, `%25`) belongs to directory names only, never to `partitionValues`.
 */

/** Old Hive-style writers stored a null partition as this marker instead of JSON null. */
export const HIVE_DEFAULT_PARTITION = "__HIVE_DEFAULT_PARTITION__";

const INTEGER = /^[+-]?\d+$/;
const DECIMAL_NUMBER = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/;
const FLOATING = /^([+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?|NaN|[+-]?Infinity)$/;
const DATE = /^[+-]?\d{4,}-\d{2}-\d{2}$/;
/** `{date} {time}[.fraction]`, or ISO 8601 with `T` and an optional `Z` / `±hh:mm` offset. */
const TIMESTAMP =
  /^([+-]?\d{4,}-\d{2}-\d{2})[ T](\d{2}:\d{2}:\d{2}(?:\.\d{1,9})?)(Z|[+-]\d{2}(?::?\d{2})?)?$/;

const INTEGER_RANGES = {
  byte: [-(2n ** 7n), 2n ** 7n - 1n],
  short: [-(2n ** 15n), 2n ** 15n - 1n],
  integer: [-(2n ** 31n), 2n ** 31n - 1n],
  long: [-(2n ** 63n), 2n ** 63n - 1n],
} as const;

export interface PartitionValueOptions {
  /**
   * IANA zone of the writer, for timestamp values written without an offset (old Spark writers used
   * the session zone). Default UTC, what current Spark and delta-rs write.
   */
  readonly timeZone?: string;
}

/** True when the serialized value stands for null: JSON null, empty, or the Hive marker. */
export function isNullPartitionValue(raw: string | null | undefined): raw is null | undefined | "" {
  return raw === null || raw === undefined || raw === "" || raw === HIVE_DEFAULT_PARTITION;
}

/**
 * A DuckDB expression of type `duckType(type)` for the serialized `raw` value of partition column
 * `column`. Throws `SchemaError` when `raw` is not a valid serialization for the type.
 */
export function partitionValueSql(
  type: ScalarType,
  raw: string | null | undefined,
  column: string,
  options: PartitionValueOptions = {},
): string {
  const sqlType = duckType(type);
  if (isNullPartitionValue(raw) || type === "void") return `CAST(NULL AS ${sqlType})`;
  const invalid = () =>
    new SchemaError(`partition column ${column}: ${JSON.stringify(raw)} is not a valid ${typeName(type)}`, {
      data: { column, value: raw },
    });
  const cast = (text: string) => `CAST(${quoteLiteral(text)} AS ${sqlType})`;
  if (typeof type === "object") {
    if (!DECIMAL_NUMBER.test(raw)) throw invalid();
    return cast(raw);
  }
  switch (type) {
    case "string":
      return cast(raw);
    case "byte":
    case "short":
    case "integer":
    case "long": {
      if (!INTEGER.test(raw)) throw invalid();
      const [min, max] = INTEGER_RANGES[type];
      const value = BigInt(raw);
      if (value < min || value > max) throw invalid();
      return cast(value.toString());
    }
    case "float":
    case "double":
      if (!FLOATING.test(raw)) throw invalid();
      return cast(raw.replace(/^\+/, ""));
    case "boolean": {
      const lower = raw.toLowerCase();
      if (lower !== "true" && lower !== "false") throw invalid();
      return cast(lower);
    }
    case "binary":
      // Each character of the string is one byte of the value, written as UTF-8 by Spark and
      // delta-rs: the bytes are the string's UTF-8 encoding.
      return `unhex(${quoteLiteral(Buffer.from(raw, "utf8").toString("hex"))})`;
    case "date":
      if (!DATE.test(raw)) throw invalid();
      return cast(raw);
    case "timestamp":
    case "timestamp_ntz": {
      const m = TIMESTAMP.exec(raw);
      if (!m) throw invalid();
      const wallClock = `${m[1]} ${m[2]}`;
      if (type === "timestamp_ntz") return cast(wallClock);
      // Without an offset the value is wall-clock time in the writer's zone (PROTOCOL.md "Partition
      // Value Serialization"), which the log does not record: the caller's zone, else UTC.
      if (m[3] === undefined && options.timeZone) {
        return `timezone(${quoteLiteral(options.timeZone)}, CAST(${quoteLiteral(wallClock)} AS TIMESTAMP))`;
      }
      const offset = m[3] === undefined || m[3] === "Z" ? "+00" : m[3];
      return cast(`${wallClock}${offset}`);
    }
  }
}

function typeName(type: ScalarType): string {
  return typeof type === "string" ? type : `decimal(${type.precision},${type.scale})`;
}
