/**
 * The difference of two tables' rows (docs/branches.md "Diff"), pure. Rows compare as whole rows, a
 * multiset each (a row twice on one side and once on the other is once "only" on that side). With
 * key columns, a key present on both sides whose rows differ is "changed" (both rows sampled), and
 * only rows whose key is on one side alone count as "only".
 */

export type Row = Readonly<Record<string, unknown>>;

export interface RowDiff {
  readonly onlyOnBranch: { readonly count: number; readonly samples: readonly Row[] };
  readonly onlyOnLive: { readonly count: number; readonly samples: readonly Row[] };
  /** Keyed tables only. */
  readonly changed?: {
    readonly count: number;
    readonly samples: readonly { readonly key: Row; readonly branch: Row; readonly live: Row }[];
  };
}

/** A row's identity: its columns in name order, as JSON. */
function identity(row: Row, columns?: readonly string[]): string {
  const names = columns ?? Object.keys(row).sort();
  return JSON.stringify(names.map((name) => [name, row[name] ?? null]));
}

/** The rows of `a` not matched one for one in `b`. */
function minus(a: readonly Row[], b: readonly Row[]): Row[] {
  const left = new Map<string, number>();
  for (const row of b) left.set(identity(row), (left.get(identity(row)) ?? 0) + 1);
  const out: Row[] = [];
  for (const row of a) {
    const id = identity(row);
    const n = left.get(id) ?? 0;
    if (n > 0) left.set(id, n - 1);
    else out.push(row);
  }
  return out;
}

export function diffRows(
  branch: readonly Row[],
  live: readonly Row[],
  keys: readonly string[] | undefined,
  maxSamples: number,
): RowDiff {
  const onlyBranch = minus(branch, live);
  const onlyLive = minus(live, branch);
  const sampled = (rows: readonly Row[]) => ({ count: rows.length, samples: rows.slice(0, maxSamples) });
  if (!keys || keys.length === 0) return { onlyOnBranch: sampled(onlyBranch), onlyOnLive: sampled(onlyLive) };
  const liveByKey = new Map(onlyLive.map((row) => [identity(row, keys), row]));
  const changedKeys = new Set<string>();
  const changed: { key: Row; branch: Row; live: Row }[] = [];
  for (const row of onlyBranch) {
    const id = identity(row, keys);
    const other = liveByKey.get(id);
    if (!other || changedKeys.has(id)) continue;
    changedKeys.add(id);
    changed.push({ key: Object.fromEntries(keys.map((k) => [k, row[k] ?? null])), branch: row, live: other });
  }
  const keyed = (rows: readonly Row[]) => rows.filter((row) => !changedKeys.has(identity(row, keys)));
  return {
    onlyOnBranch: sampled(keyed(onlyBranch)),
    onlyOnLive: sampled(keyed(onlyLive)),
    changed: { count: changed.length, samples: changed.slice(0, maxSamples) },
  };
}
