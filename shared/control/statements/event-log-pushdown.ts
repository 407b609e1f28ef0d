/**
 * Which event types a statement can keep of its `event_log('<id>')` relation, read off the
 * statement's parse tree (`json_serialize_sql`'s shape), so that only those are read from the event
 * log: the seed's rewind-point listing (`WHERE event_type = 'rewind_summary' AND …`) then reads one
 * event per update instead of every event the pipeline ever had. Pure.
 *
 * The answer is a superset of what the statement reads, or `undefined` (read everything). It narrows
 * only when the relation is named once in the whole statement, as the only FROM of a SELECT whose
 * WHERE has, among its top-level AND terms, `event_type = '<type>'` or `event_type IN ('<type>', …)`
 * (unqualified or qualified by the relation's alias, no column aliases on it): a row that fails the
 * term cannot reach anything else the statement computes. The statement still applies its WHERE, so
 * what it answers does not change.
 */
export function eventTypesRead(statement: unknown, relation: string): readonly string[] | undefined {
  const references: Json[] = [];
  const selects: Json[] = [];
  walk(statement, (node) => {
    if (node["type"] === "BASE_TABLE" && node["table_name"] === relation) references.push(node);
    if (node["type"] === "SELECT_NODE") selects.push(node);
  });
  if (references.length !== 1) return undefined;
  const from = references[0]!;
  if (
    !isEmptyList(from["column_name_alias"]) ||
    nonEmpty(from["schema_name"]) ||
    nonEmpty(from["catalog_name"])
  )
    return undefined;
  const select = selects.find((node) => node["from_table"] === from);
  if (!select || !isObject(select["where_clause"])) return undefined;
  // DuckDB's identifiers are case-insensitive: `E.EVENT_TYPE` names the same column.
  const names = new Set([relation, ...(nonEmpty(from["alias"]) ? [from["alias"] as string] : [])].map(lower));
  for (const term of andTerms(select["where_clause"])) {
    const types = typesOf(term, names);
    if (types) return types;
  }
  return undefined;
}

type Json = Record<string, unknown>;

function walk(value: unknown, visit: (node: Json) => void): void {
  if (Array.isArray(value)) for (const item of value) walk(item, visit);
  else if (isObject(value)) {
    visit(value);
    for (const key in value) walk(value[key], visit);
  }
}

function andTerms(expression: Json): Json[] {
  if (expression["class"] !== "CONJUNCTION" || expression["type"] !== "CONJUNCTION_AND") return [expression];
  return (expression["children"] as unknown[]).filter(isObject).flatMap(andTerms);
}

/** The types `term` lets through, if it is `event_type = '…'` or `event_type IN ('…', …)`. */
function typesOf(term: Json, names: ReadonlySet<string>): string[] | undefined {
  if (term["class"] === "COMPARISON" && term["type"] === "COMPARE_EQUAL") {
    const [left, right] = [term["left"], term["right"]];
    const text = isEventType(left, names)
      ? textOf(right)
      : isEventType(right, names)
        ? textOf(left)
        : undefined;
    return text === undefined ? undefined : [text];
  }
  if (term["class"] === "OPERATOR" && term["type"] === "COMPARE_IN") {
    const [column, ...values] = term["children"] as unknown[];
    if (!isEventType(column, names)) return undefined;
    const texts = values.map(textOf);
    return texts.every((text) => text !== undefined) ? (texts as string[]) : undefined;
  }
  return undefined;
}

function isEventType(expression: unknown, names: ReadonlySet<string>): boolean {
  if (!isObject(expression) || expression["class"] !== "COLUMN_REF") return false;
  const path = (expression["column_names"] as unknown[]).map((name) => lower(String(name)));
  if (path.length === 1) return path[0] === "event_type";
  return path.length === 2 && names.has(path[0]!) && path[1] === "event_type";
}

function lower(name: string): string {
  return name.toLowerCase();
}

/** A VARCHAR constant's text (a NULL, a number or an expression is none). */
function textOf(expression: unknown): string | undefined {
  if (!isObject(expression) || expression["class"] !== "CONSTANT") return undefined;
  const value = expression["value"] as { type?: { id?: string }; is_null?: boolean; value?: unknown };
  return value.type?.id === "VARCHAR" && !value.is_null && typeof value.value === "string"
    ? value.value
    : undefined;
}

function isObject(value: unknown): value is Json {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function isEmptyList(value: unknown): boolean {
  return value === undefined || (Array.isArray(value) && value.length === 0);
}

function nonEmpty(value: unknown): boolean {
  return typeof value === "string" && value !== "";
}
