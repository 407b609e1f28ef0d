import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { Action } from "../../../shared/delta/log/actions.ts";
import { writeCheckpoint } from "../../../shared/delta/log/checkpoint-writer.ts";
import { LAST_CHECKPOINT_KEY } from "../../../shared/delta/log/log-paths.ts";
import { replayActions, toSnapshot } from "../../../shared/delta/log/log-replay.ts";
import { forgetDecodedCheckpoints } from "../../../shared/delta/read/checkpoint-cache.ts";
import { loadSnapshot } from "../../../shared/delta/read/snapshot-loader.ts";
import type { Snapshot } from "../../../shared/delta/read/snapshot.ts";
import type { DuckSession } from "../../../shared/duck/duck-session.ts";
import type { ScratchFolder } from "../../../shared/duck/scratch-folder.ts";
import { MemoryObjectStore } from "../../../shared/object-store/memory-object-store.ts";
import { exemptFromProtocolCheck } from "../../support/protocol-check.ts";
import { countingStore } from "./delta-test-kit.ts";
import { add, commitInfo, metaData, protocol, remove, writeCommit } from "./table-fixture.ts";
import { openDuckAndScratch } from "../../support/duck-and-scratch.ts";

/**
 * Which log files a snapshot as of a version reads: only its segment (the newest checkpoint at or
 * before it, the commits after), and whatever it reads, the same state as replaying every commit.
 */

let duck: DuckSession;
let scratch: ScratchFolder;
openDuckAndScratch((opened) => ({ duck, scratch } = opened));

/** One commit: files added (`true`) or removed by name, and an app's transaction version. */
type Step = readonly (readonly [boolean, string])[];

function commitsOf(steps: readonly Step[]): Action[][] {
  const commits: Action[][] = [[commitInfo(1_000), protocol(), metaData(), add("f0")]];
  steps.forEach((step, i) => {
    const v = i + 1;
    const actions: Action[] = [commitInfo(1_000 + v), { txn: { appId: "app", version: v } }];
    for (const [adds, name] of step) actions.push(adds ? add(`${name}-${v}`, { size: v }) : remove(name));
    commits.push(actions);
  });
  return commits;
}

/** The state at `version` from every commit, no checkpoint: what any segment must reproduce. */
function replayed(commits: readonly Action[][], version: number): Snapshot {
  return toSnapshot(replayActions(commits.slice(0, version + 1).flat()), { version, timestamp: 0 });
}

function comparable(snapshot: Snapshot) {
  return {
    version: snapshot.version,
    protocol: snapshot.protocol,
    metadata: snapshot.metadata,
    files: [...snapshot.files].map(([path, file]) => [path, file.size]).sort(),
    txns: [...snapshot.txns].map(([app, txn]) => [app, txn.version]),
  };
}

/** A table of `commits`, checkpointed at `checkpoints` (each moving `_last_checkpoint`). */
async function tableOf(
  commits: readonly Action[][],
  checkpoints: Iterable<number>,
): Promise<MemoryObjectStore> {
  const store = new MemoryObjectStore(() => 1_000);
  for (const [v, actions] of commits.entries()) await writeCommit(store, v, actions);
  for (const v of [...new Set(checkpoints)].sort((a, b) => a - b)) {
    await writeCheckpoint(store, duck, scratch, replayed(commits, v), 1_000);
  }
  return store;
}

describe("a snapshot as of a version", () => {
  it("equals the replay of every commit up to it, whichever checkpoints and hint the log holds", async () => {
    const name = fc.constantFrom("f0", "a", "b", "c");
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.array(fc.tuple(fc.boolean(), name), { maxLength: 3 }), { minLength: 1, maxLength: 24 }),
        fc.array(fc.nat(), { maxLength: 3 }),
        fc.nat(),
        fc.option(fc.nat(), { nil: undefined }),
        async (steps, checkpointSeeds, versionSeed, staleHintSeed) => {
          const commits = commitsOf(steps);
          const latest = commits.length - 1;
          const store = await tableOf(
            commits,
            checkpointSeeds.map((seed) => seed % (latest + 1)),
          );
          // A hint left behind by a writer that stopped before moving it (any version, even one without a checkpoint).
          if (staleHintSeed !== undefined) {
            exemptFromProtocolCheck(store);
            await store.put(
              LAST_CHECKPOINT_KEY,
              new TextEncoder().encode(JSON.stringify({ version: staleHintSeed % (latest + 1) })),
            );
          }
          const version = versionSeed % (latest + 1);
          forgetDecodedCheckpoints();
          const snapshot = await loadSnapshot(store, { version });
          expect(comparable(snapshot)).toEqual(comparable(replayed(commits, version)));
          expect(comparable(await loadSnapshot(store))).toEqual(comparable(replayed(commits, latest)));
        },
      ),
      { numRuns: 40 },
    );
  });

  it("lists only the log up to that version, not the commits after it", async () => {
    const commits = commitsOf(Array.from({ length: 300 }, () => [[true, "a"]] as const));
    const store = await tableOf(commits, [10, 100, 200, 300]);
    const { store: counted, listed } = countingStore(store);
    const snapshot = await loadSnapshot(counted, { version: 10 });
    expect(snapshot.files.size).toBe(11);
    // Versions 0 to 10 (11 commits, a checkpoint) and the first name past them, not 600 files.
    expect(listed.length).toBeLessThanOrEqual(30);
  });
});
