/** Why a parsed `SELECT (condition)` is more than one expression, or undefined when it is just that. */
export function conditionShapeProblem(
  statements: unknown[] | undefined,
  options: { readonly subqueries?: boolean } = {},
): string | undefined {
  const node = (statements?.length === 1 ? (statements[0] as { node?: unknown }).node : undefined) as
    Record<string, unknown> | undefined;
  const clean =
    node?.["type"] === "SELECT_NODE" &&
    Array.isArray(node["select_list"]) &&
    node["select_list"].length === 1 &&
    (node["from_table"] as { type?: unknown } | undefined)?.type === "EMPTY" &&
    node["where_clause"] === null &&
    node["having"] === null &&
    node["qualify"] === null &&
    node["sample"] === null &&
    (node["group_expressions"] as unknown[] | undefined)?.length === 0 &&
    (node["modifiers"] as unknown[] | undefined)?.length === 0 &&
    ((node["cte_map"] as { map?: unknown[] } | undefined)?.map?.length ?? 0) === 0;
  if (!clean) return "must be one condition (e.g. \"region = 'eu'\"), not a clause or query";
  if (!options.subqueries && containsSubquery(node["select_list"]))
    return "must not contain a subquery: it is a condition on the row's own columns";
  return undefined;
}

function containsSubquery(node: unknown): boolean {
  if (Array.isArray(node)) return node.some(containsSubquery);
  if (node === null || typeof node !== "object") return false;
  const record = node as Record<string, unknown>;
  if (record["class"] === "SUBQUERY" || record["type"] === "SUBQUERY") return true;
  return Object.values(record).some(containsSubquery);
}
