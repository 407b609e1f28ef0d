import { describe, expect, it } from "vitest";
import { describeInterval, parseInterval } from "../../../shared/pipeline/duration.ts";
import { parseTimestamp } from "../../../shared/pipeline/timestamp.ts";

describe("parseInterval", () => {
  it.each([
    ["interval 7 days", 7 * 86_400_000],
    ["INTERVAL 1 week", 604_800_000],
    ["30 seconds", 30_000],
    ["interval 2 hours", 7_200_000],
  ])("reads %j", (text, ms) => expect(parseInterval(text)).toBe(ms));

  it.each(["7 days ago", "interval days", "interval 3 fortnights", ""])("refuses %j", (text) =>
    expect(parseInterval(text)).toBeUndefined(),
  );

  it("describes durations in the largest whole unit", () => {
    expect(describeInterval(604_800_000)).toBe("1 week");
    expect(describeInterval(2 * 86_400_000)).toBe("2 days");
    expect(describeInterval(90_000)).toBe("90 seconds");
  });
});

describe("parseTimestamp", () => {
  it("reads Databricks' UTC form and ISO-8601 with a zone", () => {
    expect(parseTimestamp("2026-01-31 12:00:00")).toBe(Date.UTC(2026, 0, 31, 12));
    expect(parseTimestamp("2026-01-31T12:00:00Z")).toBe(Date.UTC(2026, 0, 31, 12));
    expect(parseTimestamp("2026-01-31T13:00:00+01:00")).toBe(Date.UTC(2026, 0, 31, 12));
  });

  it.each(["2026-01-31T12:00:00", "2026-02-30 00:00:00", "yesterday", "2026-01-31"])("refuses %j", (text) =>
    expect(parseTimestamp(text)).toBeUndefined(),
  );
});
