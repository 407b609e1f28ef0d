/**
 * The circles in which datasets read each other, found by a depth-first walk of `reads` (a dataset's
 * name → the names it reads). Each circle is given once, as the path that closes it (`a → b → a`),
 * however many of its members the walk starts from.
 */
export function readCycles(reads: ReadonlyMap<string, ReadonlySet<string>>): string[][] {
  const state = new Map<string, "open" | "done">();
  const found = new Map<string, string[]>();
  const visit = (name: string, path: string[]): void => {
    if (state.get(name) === "done") return;
    if (state.get(name) === "open") {
      const cycle = [...path.slice(path.indexOf(name)), name];
      const key = [...new Set(cycle)].sort().join(",");
      if (!found.has(key)) found.set(key, cycle);
      return;
    }
    state.set(name, "open");
    for (const next of reads.get(name) ?? []) visit(next, [...path, name]);
    state.set(name, "done");
  };
  for (const name of reads.keys()) visit(name, []);
  return [...found.values()];
}
