/**
 * User SQL already checked in this process (exactly one SELECT, the pipeline's namespace made bare:
 * `Sandbox.checkedQuery`), by its text and namespace. The check is a pure function of those two, and
 * every batch of a flow and every refresh of a view checks the same text again: remembering the
 * answer saves a parse and a deparse in DuckDB per flow per update. Only queries that passed are
 * kept; a refused one is parsed again, so its error is raised each time.
 */

/** Distinct queries kept: a process runs a few pipelines' flows and views. */
const KEPT = 512;

const checked = new Map<string, string>();

function keyOf(sql: string, namespace: { readonly catalog: string; readonly schema: string } | undefined) {
  return JSON.stringify([namespace?.catalog ?? null, namespace?.schema ?? null, sql]);
}

export async function rememberedCheck(
  sql: string,
  namespace: { readonly catalog: string; readonly schema: string } | undefined,
  check: () => Promise<string>,
): Promise<string> {
  const key = keyOf(sql, namespace);
  const known = checked.get(key);
  if (known !== undefined) return known;
  const text = await check();
  if (checked.size >= KEPT) checked.delete(checked.keys().next().value!);
  checked.set(key, text);
  return text;
}
