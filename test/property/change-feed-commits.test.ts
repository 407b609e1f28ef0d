import fc from "fast-check";
import { mkdtemp, readFile, rm, unlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  commitTimestamp,
  DeltaTable,
  findCommitInfo,
  readCommitRange,
  readListedRange,
} from "../../shared/delta/index.ts";
import { DuckSession } from "../../shared/duck/duck-session.ts";
import { LocalObjectStore } from "../../shared/object-store/local-object-store.ts";
import { field, schemaOf } from "../unit/delta/delta-test-kit.ts";

/**
 * A change feed's commits read by name (`readCommitRange`, no listing when the range is closed and
 * its commits carry in-commit timestamps) against the listing it skips (`readListedRange`): for random
 * ranges (open, empty, reversed, past the end, negative) of a log whose commits may be missing (holes,
 * a cleaned-up start) or lack their in-commit timestamp, the same commits with the same actions and
 * times, or the same refusal.
 */
let duck: DuckSession;
let dir: string;
beforeAll(async () => {
  duck = await DuckSession.open();
  dir = await mkdtemp(path.join(tmpdir(), "ebb-feed-commits-"));
});
afterAll(async () => {
  duck?.close();
  await rm(dir, { recursive: true, force: true });
});

type Outcome = { commits: unknown[] } | { error: string };

async function outcome(
  read: () => Promise<{ ref: { version: number; lastModified: number }; actions: unknown[] }[]>,
): Promise<Outcome> {
  try {
    const commits = await read();
    return {
      commits: commits.map(({ ref, actions }) => ({
        version: ref.version,
        time: commitTimestamp(findCommitInfo(actions as never), ref.lastModified),
        actions,
      })),
    };
  } catch (error) {
    return { error: `${(error as Error).name}: ${(error as Error).message}` };
  }
}

describe("change feed commits read by name", () => {
  it("match the listed commits", async () => {
    let n = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 6 }),
        fc.array(fc.constantFrom("keep", "keep", "keep", "drop", "untimed"), { minLength: 8, maxLength: 8 }),
        fc.integer({ min: -1, max: 8 }),
        fc.option(fc.integer({ min: -1, max: 9 }), { nil: undefined }),
        fc.boolean(),
        async (appends, fates, from, to, timed) => {
          const store = new LocalObjectStore(path.join(dir, `t${n++}`));
          const properties = { "delta.enableInCommitTimestamps": String(timed) };
          const table = await DeltaTable.create(
            store,
            { schema: schemaOf(field("id", "long")), properties },
            { duck },
          );
          for (let id = 1; id <= appends; id++) await table.append({ rows: [{ id }] });
          await table.close();
          for (let v = 0; v <= appends; v++) {
            const file = path.join(store.root, "_delta_log", `${String(v).padStart(20, "0")}.json`);
            if (fates[v] === "drop") await unlink(file);
            if (fates[v] === "untimed") {
              const text = await readFile(file, "utf8");
              await writeFile(file, text.replace(/"inCommitTimestamp":\d+,/, ""));
            }
          }
          const named = await outcome(() => readCommitRange(store, from, to));
          const listed = await outcome(() => readListedRange(store, from, to));
          expect(named).toEqual(listed);
        },
      ),
      { numRuns: 60 },
    );
  });
});
