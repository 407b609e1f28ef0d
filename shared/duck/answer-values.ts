import {
  DuckDBDecimalValue,
  DuckDBMapType,
  DuckDBMapValue,
  DuckDBTypeId,
  JSDuckDBValueConverter,
  type DuckDBValueConverter,
  type JS,
} from "@duckdb/node-api";

/**
 * Values as an answer hands them to a user (query results, change rows, SQL statements): DuckDB's JS
 * conversion, except that a DECIMAL keeps its exact digits (the JS conversion goes through a double,
 * which rounds past 15 significant digits) and a MAP is a `Map` (rendered as a JSON object, as
 * Databricks renders a map, not as a list of key-value pairs).
 */

/** A DECIMAL's exact text, as DuckDB prints it (`5.00`: all of its scale's digits). */
export class DecimalText {
  constructor(readonly text: string) {}

  /** As a JSON value: a number when the number reads back as the same text at the scale, else the text. */
  toJSON(): number | string {
    const number = Number(this.text);
    const scale = this.text.split(".")[1]?.length ?? 0;
    return Number.isFinite(number) && number.toFixed(scale) === this.text ? number : this.text;
  }

  toString(): string {
    return this.text;
  }
}

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
