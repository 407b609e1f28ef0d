import { readFile } from "node:fs/promises";
import { describe, expect, it } from "vitest";
import { PIPELINE_STATES } from "../../../shared/store/pipelines-repository.ts";
import { UPDATE_STATES } from "../../../shared/store/updates-repository.ts";

/**
 * docs/states.md documents every state the code has, and no other: its tables and diagrams name
 * exactly `UPDATE_STATES` and `PIPELINE_STATES`, each with a way out (the integration test
 * state-ways-out.test.ts drives each one from the same lists).
 */

const DOC = new URL("../../../docs/states.md", import.meta.url);

/** The section of the doc under `## <heading>`, up to the next `## `. */
function section(doc: string, heading: string): string {
  const start = doc.indexOf(`## ${heading}\n`);
  if (start < 0) throw new Error(`docs/states.md has no section "## ${heading}"`);
  const end = doc.indexOf("\n## ", start + 1);
  return doc.slice(start, end < 0 ? undefined : end);
}

/** The table rows of a section: state name, and the row's last cell (its way out). */
function tableRows(text: string): { state: string; wayOut: string }[] {
  return [...text.matchAll(/^\| `([A-Z_]+)` +\|(.*)\|\s*$/gm)].map((match) => ({
    state: match[1]!,
    wayOut: match[2]!.split("|").at(-1)!.trim(),
  }));
}

/** The states a mermaid diagram of a section names. */
function diagramStates(text: string): Set<string> {
  const diagram = /```mermaid\n([\s\S]*?)```/.exec(text)?.[1] ?? "";
  return new Set([...diagram.matchAll(/\b[A-Z][A-Z_]{3,}\b/g)].map((m) => m[0]));
}

describe("docs/states.md", () => {
  const cases = [
    { heading: "Update states", states: UPDATE_STATES },
    { heading: "Pipeline states", states: PIPELINE_STATES },
  ] as const;
  for (const { heading, states } of cases) {
    it(`lists every one of the ${heading.toLowerCase()}, each with a way out`, async () => {
      const text = section(await readFile(DOC, "utf8"), heading);
      const rows = tableRows(text);
      expect(rows.map((r) => r.state).sort()).toEqual([...states].sort());
      for (const row of rows) expect(row.wayOut, row.state).not.toMatch(/^(—|-)?$/);
    });

    it(`draws only ${heading.toLowerCase()} that exist`, async () => {
      const text = section(await readFile(DOC, "utf8"), heading);
      const known = new Set<string>(states);
      const drawn = [...diagramStates(text)].filter((name) => !/^(EXECUTION_LOST)$/.test(name));
      for (const name of drawn) expect(known.has(name), `${name} in the diagram`).toBe(true);
    });
  }

  it("is linked from the README", async () => {
    const readme = await readFile(new URL("../../../README.md", import.meta.url), "utf8");
    expect(readme).toContain("(docs/states.md)");
  });
});
