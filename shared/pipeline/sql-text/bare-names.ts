/**
 * References into the pipeline's own namespace made bare in a serialized statement (pure): the
 * sandbox names each dataset by its bare name, so `catalog.schema.t` and `schema.t` become `t`.
 */

export interface Namespace {
  readonly catalog: string;
  readonly schema: string;
}

/** Strips `catalog.schema.` / `schema.` from table references into `namespace` (in place); whether any was. */
export function unqualify(node: unknown, namespace: Namespace): boolean {
  if (Array.isArray(node)) return node.map((child) => unqualify(child, namespace)).some(Boolean);
  if (node === null || typeof node !== "object") return false;
  const fields = node as Record<string, unknown>;
  let changed = false;
  if (fields["type"] === "BASE_TABLE") {
    const catalog = String(fields["catalog_name"] ?? "").toLowerCase();
    const schema = String(fields["schema_name"] ?? "").toLowerCase();
    const ours = schema === namespace.schema && (catalog === "" || catalog === namespace.catalog);
    if (ours) {
      fields["catalog_name"] = "";
      fields["schema_name"] = "";
      changed = true;
    }
  }
  for (const value of Object.values(fields)) changed = unqualify(value, namespace) || changed;
  return changed;
}
