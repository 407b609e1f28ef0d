import { afterEach, describe, expect, it } from "vitest";
import { zoneChoices } from "../../../ui/src/time/zoned-time.ts";

/**
 * The top bar's time-zone switch: the browser's zone and UTC, or only UTC when the browser is in UTC
 * (a switch there read "UTC | UTC" and changed nothing).
 */
describe("the time-zone switch's choices", () => {
  const machineZone = process.env["TZ"];
  afterEach(() => {
    if (machineZone === undefined) delete process.env["TZ"];
    else process.env["TZ"] = machineZone;
  });
  const JULY = Date.UTC(2026, 6, 15);

  it.each(["UTC", "Etc/UTC", "GMT", "Africa/Abidjan"])("offers only UTC in %s", (zone) => {
    process.env["TZ"] = zone;
    expect(zoneChoices(JULY)).toEqual(["UTC"]);
  });

  it.each(["Asia/Kolkata", "America/New_York", "Europe/London"])(
    "offers the browser's zone and UTC in %s (UTC in winter only counts as another zone)",
    (zone) => {
      process.env["TZ"] = zone;
      expect(zoneChoices(JULY)).toEqual(["local", "UTC"]);
    },
  );
});
