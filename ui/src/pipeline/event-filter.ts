/** The event-log filter the form describes, in the API's grammar (api.md "Event log"); pure. */

export interface EventFilterForm {
  readonly levels: readonly string[];
  readonly eventType: string;
  readonly dataset: string;
  readonly updateId: string;
  /** ISO-8601, or "". */
  readonly after: string;
}

export const EMPTY_FILTER: EventFilterForm = {
  levels: [],
  eventType: "",
  dataset: "",
  updateId: "",
  after: "",
};

const quote = (value: string) => `'${value.replaceAll("'", "''")}'`;

export function eventFilter(form: EventFilterForm): string | undefined {
  const parts: string[] = [];
  if (form.levels.length === 1) parts.push(`level = ${quote(form.levels[0]!)}`);
  if (form.levels.length > 1) parts.push(`level in (${form.levels.map(quote).join(", ")})`);
  if (form.eventType) parts.push(`event_type = ${quote(form.eventType)}`);
  if (form.dataset) parts.push(`origin.dataset_name = ${quote(form.dataset)}`);
  if (form.updateId.trim()) parts.push(`origin.update_id = ${quote(form.updateId.trim())}`);
  if (form.after) parts.push(`timestamp >= ${quote(form.after)}`);
  return parts.length > 0 ? parts.join(" AND ") : undefined;
}
