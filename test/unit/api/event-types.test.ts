import { readdir, readFile } from "node:fs/promises";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { EVENT_LOG_TYPES } from "../../../shared/api/event-types.ts";
import { EVENT_TYPES } from "../../../shared/rewind/rewind-events.ts";

/** Every event type the code appends is in the one list the UI's filter and MCP's tool offer. */
describe("event log types", () => {
  it("lists every type Ebb writes", async () => {
    const root = path.resolve(import.meta.dirname, "../../../shared");
    const written = new Set<string>(Object.values(EVENT_TYPES));
    for (const file of await readdir(root, { recursive: true })) {
      if (!file.endsWith(".ts")) continue;
      const text = await readFile(path.join(root, file), "utf8");
      for (const m of text.matchAll(/event_type: "([a-z_]+)"|this\.append\(\s*"([a-z_]+)"/g))
        written.add((m[1] ?? m[2])!);
    }
    expect(written.size).toBeGreaterThan(5);
    expect([...written].filter((t) => !(EVENT_LOG_TYPES as readonly string[]).includes(t))).toEqual([]);
    expect(EVENT_LOG_TYPES).toContain("branch_published");
  });
});
