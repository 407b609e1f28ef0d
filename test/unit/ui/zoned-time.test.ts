import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  formatInstant,
  parseTime,
  requestTimestamp,
  wallText,
  type DisplayZone,
} from "../../../ui/src/time/zoned-time.ts";

/**
 * The UI's times: what it shows can be typed back and names the same instant, in the browser's zone
 * (here east of UTC, Asia/Kolkata) or UTC; what it sends is that instant in the API's UTC form.
 */
describe("the UI's zoned times", () => {
  const machineZone = process.env["TZ"];
  beforeAll(() => {
    process.env["TZ"] = "Asia/Kolkata";
  });
  afterAll(() => {
    if (machineZone === undefined) delete process.env["TZ"];
    else process.env["TZ"] = machineZone;
  });

  const instant = fc.integer({ min: Date.UTC(2000, 0, 1), max: Date.UTC(2100, 0, 1) });
  const zone = fc.constantFrom<DisplayZone>("local", "UTC");

  it("shows a time with its zone", () => {
    const t = Date.UTC(2026, 11, 6, 8, 6, 31);
    expect(formatInstant(t, "local")).toBe("2026-12-06 13:36:31 UTC+05:30");
    expect(formatInstant(t, "UTC")).toBe("2026-12-06 08:06:31 UTC");
    expect(requestTimestamp(t)).toBe("2026-12-06T08:06:31Z");
  });

  it("reads a typed time in the zone shown, unless it names its own", () => {
    const t = Date.UTC(2026, 11, 6, 8, 6, 31);
    expect(parseTime("2026-12-06 13:36:31", "local")).toBe(t);
    expect(parseTime("2026-12-06 08:06:31", "UTC")).toBe(t);
    expect(parseTime("2026-12-06T08:06:31Z", "local")).toBe(t);
    expect(parseTime("2026-12-06 13:36:31 UTC+05:30", "UTC")).toBe(t);
    expect(parseTime("2026-12-06 03:06:31 -05:00", "local")).toBe(t);
    expect(parseTime("2026-12-06 13:36", "local")).toBe(t - 31_000);
  });

  it("refuses what is no time", () => {
    for (const text of ["yesterday", "2026-02-30 10:00:00", "2026-12-06 24:00:00", "2026-12-06 10:00 PST"])
      expect(parseTime(text, "local"), text).toBeUndefined();
  });

  it("takes back every time it shows, as the same instant, in either zone", () => {
    fc.assert(
      fc.property(instant, zone, zone, (t, shownIn, typedIn) => {
        expect(parseTime(formatInstant(t, shownIn), typedIn)).toBe(t);
        expect(parseTime(wallText(t, shownIn), shownIn)).toBe(t);
        expect(Date.parse(requestTimestamp(t))).toBe(t);
      }),
    );
  });
});
