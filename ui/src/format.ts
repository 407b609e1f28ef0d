import { displayZone } from "./time/display-zone.ts";
import { formatInstant } from "./time/zoned-time.ts";

/** How the UI writes times, durations and counts: short, never ambiguous (a time names its zone). */

/** `2026-12-06 13:36:30 UTC+05:30`, in the display zone (time/zoned-time.ts). */
export function formatTime(value: number | string | undefined): string {
  if (value === undefined) return "—";
  const instant = new Date(value).getTime();
  return Number.isNaN(instant) ? String(value) : formatInstant(instant, displayZone());
}

export function formatAgo(value: number | string | undefined, now = Date.now()): string {
  if (value === undefined) return "—";
  const ms = now - new Date(value).getTime();
  if (Number.isNaN(ms)) return "—";
  if (ms < 60_000) return `${Math.max(0, Math.round(ms / 1000))} s ago`;
  if (ms < 3_600_000) return `${Math.round(ms / 60_000)} min ago`;
  if (ms < 86_400_000) return `${Math.round(ms / 3_600_000)} h ago`;
  return `${Math.round(ms / 86_400_000)} d ago`;
}

export function formatDuration(ms: number | undefined): string {
  if (ms === undefined || Number.isNaN(ms)) return "—";
  if (ms < 1000) return `${ms} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  const minutes = Math.floor(ms / 60_000);
  return `${minutes} min ${Math.round((ms % 60_000) / 1000)} s`;
}

export function formatCount(n: number | null | undefined): string {
  return n === undefined || n === null ? "—" : n.toLocaleString("en-US");
}

/** `demo.sales.orders` → `orders`. */
export function shortName(identifier: string): string {
  return identifier.split(".").at(-1) ?? identifier;
}
