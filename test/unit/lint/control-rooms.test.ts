/**
 * shared/control's rooms (one per API section: pipelines, updates with its steps and driver, events,
 * tables, statements, rewind points, flow states, over the plane they all stand on) import on
 * floors: no file imports itself back through others, and no room imports a room that imports it.
 */
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import { describe, expect, it } from "vitest";

const root = fileURLToPath(new URL("../../../", import.meta.url));
const CONTROL = "shared/control";

function filesUnder(folder: string): string[] {
  return fs.readdirSync(path.join(root, folder), { withFileTypes: true }).flatMap((entry) => {
    const child = `${folder}/${entry.name}`;
    if (entry.isDirectory()) return filesUnder(child);
    return entry.name.endsWith(".ts") ? [child] : [];
  });
}

/** Each file's imports of other files of shared/control (static, export-from and dynamic). */
function importGraph(): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const file of filesUnder(CONTROL)) {
    const { importedFiles } = ts.preProcessFile(fs.readFileSync(path.join(root, file), "utf8"), true, true);
    const targets = importedFiles
      .map((imported) => imported.fileName)
      .filter((spec) => spec.startsWith("."))
      .map((spec) => path.posix.normalize(path.posix.join(path.posix.dirname(file), spec)))
      .filter((target) => target.startsWith(`${CONTROL}/`));
    graph.set(file, targets);
  }
  return graph;
}

/** The strongly connected components of more than one node (Tarjan): each is a cycle. */
function cycles(graph: ReadonlyMap<string, readonly string[]>): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const found: string[][] = [];
  const visit = (node: string): void => {
    index.set(node, next);
    low.set(node, next++);
    stack.push(node);
    for (const to of graph.get(node) ?? []) {
      if (!index.has(to)) {
        visit(to);
        low.set(node, Math.min(low.get(node)!, low.get(to)!));
      } else if (stack.includes(to)) low.set(node, Math.min(low.get(node)!, index.get(to)!));
    }
    if (low.get(node) !== index.get(node)) return;
    const component: string[] = [];
    let member: string;
    do {
      member = stack.pop()!;
      component.push(member);
    } while (member !== node);
    if (component.length > 1) found.push(component.sort());
  };
  for (const node of graph.keys()) if (!index.has(node)) visit(node);
  return found;
}

describe("shared/control's rooms", () => {
  const files = importGraph();

  it("have no import cycle between files", () => {
    expect(cycles(files)).toEqual([]);
  });

  it("have no import cycle between rooms (a room's folder against its sub-rooms too)", () => {
    const rooms = new Map<string, Set<string>>();
    for (const [file, targets] of files) {
      const from = path.posix.dirname(file);
      const out = rooms.get(from) ?? new Set<string>();
      for (const target of targets)
        if (path.posix.dirname(target) !== from) out.add(path.posix.dirname(target));
      rooms.set(from, out);
    }
    expect(cycles(new Map([...rooms].map(([room, out]) => [room, [...out]])))).toEqual([]);
  });
});
