/**
 * Times as the UI shows and takes them, always with a zone (pure). A time is shown in the display
 * zone — the browser's own or UTC — as `2026-12-06 13:36:30 UTC+05:30`, a form that reads the same
 * everywhere and that the time fields take back as it is written. Typed without a zone, a time is in
 * the display zone; the API is sent the instant as ISO-8601 UTC (`2026-12-06T08:06:30Z`, the form
 * `rewind_timestamp` takes), shown before it is sent, so the request names the very instant the user read.
 */

export type DisplayZone = "local" | "UTC";

interface WallClock {
  readonly year: number;
  readonly month: number;
  readonly day: number;
  readonly hour: number;
  readonly minute: number;
  readonly second: number;
  readonly millisecond: number;
}

const pad = (n: number, width = 2) => String(n).padStart(width, "0");

function wallClock(instant: number, zone: DisplayZone): WallClock {
  const d = new Date(instant);
  return zone === "UTC"
    ? {
        year: d.getUTCFullYear(),
        month: d.getUTCMonth() + 1,
        day: d.getUTCDate(),
        hour: d.getUTCHours(),
        minute: d.getUTCMinutes(),
        second: d.getUTCSeconds(),
        millisecond: d.getUTCMilliseconds(),
      }
    : {
        year: d.getFullYear(),
        month: d.getMonth() + 1,
        day: d.getDate(),
        hour: d.getHours(),
        minute: d.getMinutes(),
        second: d.getSeconds(),
        millisecond: d.getMilliseconds(),
      };
}

/** Minutes east of UTC of the zone at that instant (the browser's zone moves with daylight saving). */
export function offsetMinutes(instant: number, zone: DisplayZone): number {
  return zone === "UTC" ? 0 : -new Date(instant).getTimezoneOffset();
}

/** `+05:30`, `-04:00`, or `Z` for UTC. */
function isoOffset(minutes: number): string {
  if (minutes === 0) return "Z";
  const abs = Math.abs(minutes);
  return `${minutes < 0 ? "-" : "+"}${pad(Math.floor(abs / 60))}:${pad(abs % 60)}`;
}

/** The zone as a time's suffix shows it: `UTC`, `UTC+05:30`. */
export function zoneSuffix(instant: number, zone: DisplayZone): string {
  const offset = isoOffset(offsetMinutes(instant, zone));
  return offset === "Z" ? "UTC" : `UTC${offset}`;
}

/** `2026-12-06 13:36:30` in the zone: what a time field holds. */
export function wallText(instant: number, zone: DisplayZone): string {
  const w = wallClock(instant, zone);
  const ms = w.millisecond === 0 ? "" : `.${pad(w.millisecond, 3)}`;
  return `${w.year}-${pad(w.month)}-${pad(w.day)} ${pad(w.hour)}:${pad(w.minute)}:${pad(w.second)}${ms}`;
}

/** `2026-12-06 13:36:30 UTC+05:30`: how every time is shown. */
export function formatInstant(instant: number, zone: DisplayZone): string {
  return `${wallText(instant, zone)} ${zoneSuffix(instant, zone)}`;
}

/** ISO-8601 UTC, `2026-12-06T08:06:30Z`: what a request carries (every endpoint takes this form). */
export function requestTimestamp(instant: number): string {
  return `${wallText(instant, "UTC").replace(" ", "T")}Z`;
}

const WALL = /^(\d{4})-(\d{2})-(\d{2})[ T](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,3})\d*)?)?\s*(.*)$/;
const UTC_NAMES = /^(?:Z|UTC|GMT)$/i;
const OFFSET = /^(?:UTC|GMT)?\s*([+-])(\d{1,2})(?::?(\d{2}))?$/i;

/**
 * The instant a typed time names: `yyyy-MM-dd HH:mm[:ss[.SSS]]` (or with `T`) in `zone`, unless it
 * ends with its own zone (`Z`, `UTC`, `+05:30`, `UTC+05:30`, `GMT+5:30`), which wins. Undefined when it
 * is no such time or no date on the calendar.
 */
export function parseTime(text: string, zone: DisplayZone): number | undefined {
  const m = WALL.exec(text.trim());
  if (!m) return undefined;
  const [year, month, day, hour, minute] = [m[1], m[2], m[3], m[4], m[5]].map(Number) as [
    number,
    number,
    number,
    number,
    number,
  ];
  const second = Number(m[6] ?? 0);
  const millisecond = Number((m[7] ?? "0").padEnd(3, "0"));
  if (month < 1 || month > 12 || day < 1 || day > 31 || hour > 23 || minute > 59 || second > 59)
    return undefined;
  const asUtc = Date.UTC(year, month - 1, day, hour, minute, second, millisecond);
  // Date.UTC rolls Feb 30 over to Mar 2: refuse a day the month does not have.
  if (new Date(asUtc).getUTCDate() !== day) return undefined;
  const suffix = (m[8] ?? "").trim();
  if (suffix === "") {
    if (zone === "UTC") return asUtc;
    const local = new Date(year, month - 1, day, hour, minute, second, millisecond).getTime();
    // A wall time skipped by a daylight-saving jump names no instant.
    return wallText(local, "local") === wallText(asUtc, "UTC") ? local : undefined;
  }
  if (UTC_NAMES.test(suffix)) return asUtc;
  const offset = OFFSET.exec(suffix);
  if (!offset) return undefined;
  const minutes = Number(offset[2]) * 60 + Number(offset[3] ?? 0);
  if (minutes > 18 * 60) return undefined;
  return asUtc - (offset[1] === "-" ? -minutes : minutes) * 60_000;
}

/**
 * The zones the top bar's switch offers: the browser's and UTC, or only UTC when the browser's zone
 * is UTC all year (`Etc/UTC`, `GMT`, …), where a switch would offer "UTC | UTC" and change nothing.
 */
export function zoneChoices(now = Date.now()): readonly DisplayZone[] {
  const year = new Date(now).getUTCFullYear();
  const offsets = [0, 6].map((month) => new Date(Date.UTC(year, month, 1)).getTimezoneOffset());
  return offsets.every((offset) => offset === 0) ? ["UTC"] : ["local", "UTC"];
}
