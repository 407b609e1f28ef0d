import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SchemaError } from "../../../shared/delta/errors.ts";
import { isNullPartitionValue, partitionValueSql } from "../../../shared/delta/table/partition-values.ts";
import type { ScalarType } from "../../../shared/delta/table/schema.ts";
import { DuckSession } from "../../../shared/duck/duck-session.ts";

let duck: DuckSession;
beforeAll(async () => {
  duck = await DuckSession.open();
});
afterAll(() => duck?.close());

/** Evaluates the expression DuckDB would see, rendered as text for comparison. */
async function evaluate(type: ScalarType, raw: string | null, timeZone?: string): Promise<string | null> {
  const sql = partitionValueSql(type, raw, "c", timeZone ? { timeZone } : {});
  const [row] = await duck.rows(`SELECT (${sql})::VARCHAR AS v`);
  return row!.v as string | null;
}

describe("partition values (PROTOCOL.md Partition Value Serialization)", () => {
  it("reads null, empty and the Hive marker as null, for every type", async () => {
    expect(isNullPartitionValue("__HIVE_DEFAULT_PARTITION__")).toBe(true);
    expect(isNullPartitionValue("null")).toBe(false);
    for (const type of ["string", "long", "date", "timestamp", "binary", "boolean"] as const) {
      expect(await evaluate(type, null)).toBeNull();
      expect(await evaluate(type, "")).toBeNull();
      expect(await evaluate(type, "__HIVE_DEFAULT_PARTITION__")).toBeNull();
    }
    expect(await evaluate("string", "null")).toBe("null");
  });

  it("deserializes every primitive type", async () => {
    const cases: [ScalarType, string, string][] = [
      ["string", "/%20%f 'quoted'", "/%20%f 'quoted'"],
      ["byte", "-128", "-128"],
      ["short", "32767", "32767"],
      ["integer", "-2147483648", "-2147483648"],
      ["long", "9223372036854775807", "9223372036854775807"],
      ["float", "1.5", "1.5"],
      ["double", "-0.25", "-0.25"],
      ["double", "NaN", "nan"],
      ["double", "Infinity", "inf"],
      ["boolean", "TRUE", "true"],
      ["boolean", "false", "false"],
      [{ type: "decimal", precision: 38, scale: 18 }, "12.000000000000000000", "12.000000000000000000"],
      [{ type: "decimal", precision: 5, scale: 2 }, "-1.5", "-1.50"],
      ["date", "2021-09-08", "2021-09-08"],
      ["timestamp", "2021-09-08 11:11:11", "2021-09-08 11:11:11+00"],
      ["timestamp", "1970-01-01 00:00:00.123456", "1970-01-01 00:00:00.123456+00"],
      ["timestamp", "1970-01-01T00:00:00.123456Z", "1970-01-01 00:00:00.123456+00"],
      ["timestamp", "2021-09-08T11:11:11+02:00", "2021-09-08 09:11:11+00"],
      ["timestamp_ntz", "2021-09-08 11:11:11.5", "2021-09-08 11:11:11.5"],
      ["binary", "\u0001\u0002", "\\x01\\x02"],
      ["binary", "😈", "\\xF0\\x9F\\x98\\x88"],
    ];
    for (const [type, raw, expected] of cases) {
      expect(await evaluate(type, raw), `${JSON.stringify(type)} ${raw}`).toBe(expected);
    }
  });

  it("reads an offset-less timestamp in the writer's zone when given", async () => {
    expect(await evaluate("timestamp", "2021-09-08 11:11:11", "America/Los_Angeles")).toBe(
      "2021-09-08 18:11:11+00",
    );
    expect(await evaluate("timestamp", "2021-09-08T11:11:11Z", "America/Los_Angeles")).toBe(
      "2021-09-08 11:11:11+00",
    );
  });

  it("refuses values that are not valid for the type", () => {
    const invalid: [ScalarType, string][] = [
      ["integer", "1.5"],
      ["byte", "128"],
      ["long", "9223372036854775808"],
      ["boolean", "yes"],
      ["date", "08/09/2021"],
      ["timestamp", "yesterday"],
      ["double", "1,5"],
      [{ type: "decimal", precision: 5, scale: 2 }, "abc"],
    ];
    for (const [type, raw] of invalid) {
      expect(() => partitionValueSql(type, raw, "col"), raw).toThrow(SchemaError);
    }
    expect(() => partitionValueSql("integer", "x", "col")).toThrow(
      /partition column col: "x" is not a valid integer/,
    );
  });
});
