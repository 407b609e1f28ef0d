/** How the UI writes times, durations and counts: short, in the reader's time zone, never ambiguous. */

const TIME = new Intl.DateTimeFormat(undefined, {
  year: "numeric",
  month: "short",
  day: "2-digit",
  hour: "2-digit",
  minute: "2-digit",
  second: "2-digit",
});

export function formatTime(value: number | string | undefined): string {
  if (value === undefined) return "—";
  const date = new Date(value);
  return Number.isNaN(date.getTime()) ? String(value) : TIME.format(date);
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
