/**
 * Durations as Delta table properties write them (`interval 7 days`, `interval 30 days`,
 * `interval 1 week`), also used for Ebb's own retention settings so one format serves both.
 */

const UNIT_MS: Readonly<Record<string, number>> = {
  millisecond: 1,
  second: 1_000,
  minute: 60_000,
  hour: 3_600_000,
  day: 86_400_000,
  week: 604_800_000,
};

const INTERVAL = /^\s*(?:interval\s+)?(\d+)\s+([a-z]+?)s?\s*$/i;

/** Milliseconds of `interval <n> <unit>` (units millisecond to week, singular or plural), or undefined. */
export function parseInterval(text: string): number | undefined {
  const match = INTERVAL.exec(text);
  if (!match) return undefined;
  const unit = UNIT_MS[(match[2] as string).toLowerCase()];
  return unit === undefined ? undefined : Number(match[1]) * unit;
}

/** `604800000` → `7 days`, for messages. */
export function describeInterval(ms: number): string {
  for (const [unit, size] of Object.entries(UNIT_MS).reverse()) {
    if (ms % size === 0) return `${ms / size} ${unit}${ms / size === 1 ? "" : "s"}`;
  }
  return `${ms} milliseconds`;
}
