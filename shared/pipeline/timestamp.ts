/**
 * Timestamps as users write them (semantics.md "Rewind request"): UTC `yyyy-MM-dd HH:mm:ss`
 * (Databricks' form), or ISO-8601 with `T` and a zone. A time without a zone is refused: it would mean
 * different instants on different machines.
 */
const UTC_SPACE_FORM = /^(\d{4}-\d{2}-\d{2}) (\d{2}:\d{2}:\d{2}(\.\d{1,3})?)$/;
const ISO_WITH_ZONE = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/;

/** Epoch milliseconds of a timestamp in one of the accepted forms, or undefined. */
export function parseTimestamp(text: string): number | undefined {
  const spaced = UTC_SPACE_FORM.exec(text);
  const iso = spaced ? `${spaced[1]}T${spaced[2]}Z` : ISO_WITH_ZONE.test(text) ? text : undefined;
  if (iso === undefined || !isCalendarDate(iso.slice(0, 10))) return undefined;
  const millis = Date.parse(iso);
  return Number.isNaN(millis) ? undefined : millis;
}

/** `Date.parse` rolls impossible dates over (Feb 30 becomes Mar 2); refuse them instead. */
function isCalendarDate(date: string): boolean {
  const [year, month, day] = date.split("-").map(Number) as [number, number, number];
  const probe = new Date(Date.UTC(year, month - 1, day));
  return probe.getUTCMonth() === month - 1 && probe.getUTCDate() === day;
}
