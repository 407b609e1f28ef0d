import {
  DuckDBDateValue,
  DuckDBDecimalValue,
  DuckDBMapType,
  DuckDBMapValue,
  DuckDBTimestampTZValue,
  DuckDBTimestampValue,
  DuckDBTypeId,
  JSDuckDBValueConverter,
  type DuckDBValueConverter,
  type JS,
} from "@duckdb/node-api";
import { DecimalText } from "./decimal-text.ts";

export { DecimalText } from "./decimal-text.ts";

/**
 * Values as an answer hands them to a user (query results, change rows, SQL statements): DuckDB's JS
 * conversion, except that a DECIMAL keeps its exact digits (the JS conversion goes through a double,
 * which rounds past 15 significant digits), a DATE is its ISO date (`2026-01-02`, not midnight UTC as
 * a `Date`), a TIMESTAMP is its ISO text to the microsecond (a `Date` keeps only milliseconds), and a
 * MAP is a `Map` (rendered as a JSON object, as Databricks renders a map, not as a list of key-value pairs).
 */

export type AnswerValue = JS | DecimalText | Map<AnswerValue, AnswerValue>;

export const answerValueConverter: DuckDBValueConverter<AnswerValue> = (value, type, converter) => {
  if (value === null || value === undefined) return null;
  if (type.typeId === DuckDBTypeId.DECIMAL && value instanceof DuckDBDecimalValue)
    return new DecimalText(value.toString());
  if (value instanceof DuckDBDateValue) return value.toString();
  if (value instanceof DuckDBTimestampValue || value instanceof DuckDBTimestampTZValue)
    return timestampText(value.micros) ?? value.toString();
  if (type instanceof DuckDBMapType && value instanceof DuckDBMapValue)
    return new Map(
      value.entries.map((entry) => [
        converter(entry.key, type.keyType, converter),
        converter(entry.value, type.valueType, converter),
      ]),
    );
  return JSDuckDBValueConverter(value, type, converter as DuckDBValueConverter<JS>);
};

/**
 * A timestamp's ISO-8601 text in UTC (`…T10:00:00.123456Z`), the milliseconds alone when the rest are
 * zero (as `Date.toISOString` writes them); undefined past the range of a `Date` (DuckDB's infinities).
 */
export function timestampText(micros: bigint): string | undefined {
  const belowMillis = ((micros % 1000n) + 1000n) % 1000n;
  const millis = Number((micros - belowMillis) / 1000n);
  const date = new Date(millis);
  if (Number.isNaN(date.getTime())) return undefined;
  const iso = date.toISOString();
  return belowMillis === 0n ? iso : `${iso.slice(0, -1)}${String(belowMillis).padStart(3, "0")}Z`;
}
