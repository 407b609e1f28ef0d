import { z } from "zod";
import { AGGREGATE_KINDS, groupColumn, WINDOW_START } from "../../pipeline/plan/index.ts";
import type { StateColumn, StateSchema } from "../../state/index.ts";
import { partsOf } from "./partial-aggregates.ts";

/**
 * A windowed aggregation's state rows as the flow's SQL names them, for the state reader: the key is
 * `window` (`{start, end}`, as Databricks shows a window) and each grouping key by its SQL text; the
 * value is each aggregate's partial by the aggregate's text (`count(*)`, `sum(v)`; an `avg` keeps
 * `{sum, count}`, a DISTINCT aggregate the list of its distinct values). The names come from the
 * window signature kept in the state version's meta (parse trees, turned into SQL text by `render`),
 * so a version reads under the names of the definition that wrote it.
 */

/** The window signature's JSON (`WindowedFlowPlan.stateSignature`). */
const signatureSchema = z.object({
  window: z.object({ sizeMicros: z.number().positive() }),
  /** Parse trees as JSON text (`shape` in stream-aggregation.ts). */
  keys: z.array(z.string()),
  aggregates: z.array(z.object({ kind: z.enum(AGGREGATE_KINDS), text: z.string().min(1) })),
});

/** SQL text of an expression's parse tree (the sandbox's `json_deserialize_sql`). */
export type RenderExpression = (node: unknown) => Promise<string>;

export interface NamedStateRows {
  readonly keyColumns: readonly StateColumn[];
  readonly valueColumns: readonly StateColumn[];
  /** A row of the state table (as JSON values) as its key and value under the user's names. */
  readonly key: (row: Readonly<Record<string, unknown>>) => Record<string, unknown>;
  readonly value: (row: Readonly<Record<string, unknown>>) => Record<string, unknown>;
}

/** Undefined when the meta holds no readable signature (the rows keep their stored names). */
export async function windowStateRows(
  signature: unknown,
  schema: StateSchema,
  render: RenderExpression,
): Promise<NamedStateRows | undefined> {
  let json: unknown;
  let trees: unknown[];
  try {
    json = typeof signature === "string" ? JSON.parse(signature) : undefined;
    const parsed = signatureSchema.safeParse(json);
    if (!parsed.success) return undefined;
    json = parsed.data;
    trees = [...parsed.data.keys, ...parsed.data.aggregates.map((a) => a.text)].map(
      (text) => JSON.parse(text) as unknown,
    );
  } catch {
    return undefined;
  }
  const { window, keys, aggregates } = json as z.infer<typeof signatureSchema>;
  const typeOf = (name: string) =>
    [...schema.key, ...schema.value].find((column) => column.name === name)?.type ?? "NULL";
  // DuckDB parses `count(*)` as `count_star()`: shown as written.
  const texts = await Promise.all(
    trees.map(async (tree) => (await render(tree)).replace(/^count_star\(\)$/i, "count(*)")),
  );
  const names = distinct(["window", ...texts]);
  const keyName = (j: number) => names[1 + j]!;
  const aggregateName = (i: number) => names[1 + keys.length + i]!;
  const parts = aggregates.map((a, i) => partsOf(a.kind, i));
  const partName = (name: string) => name.slice(name.lastIndexOf("_") + 1);
  return {
    keyColumns: [
      { name: "window", type: "STRUCT(start TIMESTAMP, end TIMESTAMP)" },
      ...keys.map((_, j) => ({ name: keyName(j), type: typeOf(groupColumn(j)) })),
    ],
    valueColumns: aggregates.map((a, i) => ({
      name: aggregateName(i),
      type:
        a.kind === "avg"
          ? `STRUCT(${parts[i]!.map((p) => `${partName(p.name)} ${typeOf(p.name)}`).join(", ")})`
          : typeOf(parts[i]![0]!.name),
    })),
    key: (row) => {
      const start = row[WINDOW_START];
      const end =
        typeof start === "string"
          ? new Date(Date.parse(start) + window.sizeMicros / 1000).toISOString()
          : null;
      return {
        window: { start, end },
        ...Object.fromEntries(keys.map((_, j) => [keyName(j), row[groupColumn(j)]])),
      };
    },
    value: (row) =>
      Object.fromEntries(
        aggregates.map((a, i) => [
          aggregateName(i),
          a.kind === "avg"
            ? Object.fromEntries(parts[i]!.map((p) => [partName(p.name), row[p.name]]))
            : row[parts[i]![0]!.name],
        ]),
      ),
  };
}

/** The names, a repeated one numbered (`count(*)`, `count(*) #2`), so no column hides another. */
function distinct(names: readonly string[]): string[] {
  const seen = new Map<string, number>();
  return names.map((name) => {
    const n = (seen.get(name) ?? 0) + 1;
    seen.set(name, n);
    return n === 1 ? name : `${name} #${n}`;
  });
}
