import {
  DuckDBDecimalValue,
  DuckDBMapType,
  DuckDBMapValue,
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
 * which rounds past 15 significant digits) and a MAP is a `Map` (rendered as a JSON object, as
 * Databricks renders a map, not as a list of key-value pairs).
 */

export type AnswerValue = JS | DecimalText | Map<AnswerValue, AnswerValue>;

export const answerValueConverter: DuckDBValueConverter<AnswerValue> = (value, type, converter) => {
  if (value === null || value === undefined) return null;
  if (type.typeId === DuckDBTypeId.DECIMAL && value instanceof DuckDBDecimalValue)
    return new DecimalText(value.toString());
  if (type instanceof DuckDBMapType && value instanceof DuckDBMapValue)
    return new Map(
      value.entries.map((entry) => [
        converter(entry.key, type.keyType, converter),
        converter(entry.value, type.valueType, converter),
      ]),
    );
  return JSDuckDBValueConverter(value, type, converter as DuckDBValueConverter<JS>);
};
