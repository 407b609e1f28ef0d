import { randomUUID } from "node:crypto";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  ROOT_SEQ,
  type CheckpointsRepository,
  type FlowRef,
} from "../../shared/store/checkpoints-repository.ts";
import { MemoryCheckpointsRepository } from "../../shared/store/memory-checkpoints-repository.ts";
import { checkpointsRepository } from "../integration/repositories/repositories.ts";

/**
 * The DynamoDB adapter answers `resume` and `head` from the HEAD item alone when it can (its copy of
 * HEAD's checkpoint and the highest seq planned). Random sequences of the protocol's writes — plans
 * on HEAD or on an older parent, commits of any planned seq (some refused: their parent is no longer
 * HEAD), HEAD moves to any committed checkpoint or the root — run against it and against the memory
 * adapter, the reference; after every write both answer the same `resume`, `head` and outcomes.
 *
 * RUNS sets the number of runs (default 15; each write is a few requests to the DynamoDB stand-in).
 */

type Step =
  | { readonly kind: "plan"; readonly onOlder: number }
  | { readonly kind: "commit"; readonly pick: number }
  | { readonly kind: "move"; readonly pick: number; readonly toRoot: boolean };

const step: fc.Arbitrary<Step> = fc.oneof(
  fc.record({ kind: fc.constant("plan" as const), onOlder: fc.nat({ max: 3 }) }),
  fc.record({ kind: fc.constant("commit" as const), pick: fc.nat({ max: 20 }) }),
  fc.record({ kind: fc.constant("move" as const), pick: fc.nat({ max: 20 }), toRoot: fc.boolean() }),
);

/** Each adapter keys a checkpoint by its own flow: compare what they hold, not whose it is. */
function withoutFlow(value: unknown): unknown {
  return JSON.parse(JSON.stringify(value, (key, v: unknown) => (key === "flow" ? undefined : v)));
}

async function both<T>(
  repositories: readonly [CheckpointsRepository, CheckpointsRepository],
  flows: readonly [FlowRef, FlowRef],
  call: (repository: CheckpointsRepository, flow: FlowRef) => Promise<T>,
): Promise<T> {
  const [model, dynamo] = [await call(repositories[0], flows[0]), await call(repositories[1], flows[1])];
  expect(withoutFlow(dynamo)).toEqual(withoutFlow(model));
  return model;
}

describe("resuming a flow from the DynamoDB HEAD item", () => {
  it("answers what the memory adapter answers, after any sequence of plans, commits and HEAD moves", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(step, { maxLength: 14 }), async (steps) => {
        // One instant per step: the adapters read the clock a different number of times.
        let clock = 1_760_000_000_000;
        const now = () => clock;
        const repositories = [new MemoryCheckpointsRepository(now), checkpointsRepository(now)] as const;
        const flows = [
          { pipelineId: randomUUID(), flowId: "model" },
          { pipelineId: randomUUID(), flowId: "dynamo" },
        ] as const;
        const planned: number[] = [];
        const committed: number[] = [];
        const parents: number[] = [ROOT_SEQ];
        for (const [i, s] of steps.entries()) {
          clock += 1_000;
          const { head } = await both(repositories, flows, (r, f) => r.resume(f));
          await both(repositories, flows, (r, f) => r.head(f));
          if (s.kind === "plan") {
            // On HEAD (the protocol), or on an older parent (a batch planned before a HEAD move).
            const parent = parents[Math.max(0, parents.length - 1 - s.onOlder)] ?? head.seq;
            const result = await both(repositories, flows, (r, f) =>
              r.plan(f, { parent: s.onOlder === 0 ? head.seq : parent, offsets: { step: i } }),
            );
            if (result.outcome === "planned") planned.push(result.checkpoint.seq);
          } else if (s.kind === "commit" && planned.length > 0) {
            const seq = planned[s.pick % planned.length]!;
            const result = await both(repositories, flows, (r, f) =>
              r.commit(f, seq, { tableVersion: i, committedAt: 1_700_000_000_000 + i }),
            );
            if (result.outcome === "committed") {
              committed.push(seq);
              parents.push(seq);
            }
          } else if (s.kind === "move") {
            const seq = s.toRoot || committed.length === 0 ? ROOT_SEQ : committed[s.pick % committed.length]!;
            await both(repositories, flows, (r, f) => r.moveHead(f, seq));
            parents.push(seq);
          }
        }
        await both(repositories, flows, (r, f) => r.resume(f));
        await both(repositories, flows, (r, f) => r.head(f));
      }),
      { numRuns: Number(process.env["RUNS"] ?? 15) },
    );
  });
});
