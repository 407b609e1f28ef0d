import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { MemoryObjectStore } from "../../../shared/object-store/memory-object-store.ts";
import { listAllKeys } from "../../../shared/object-store/object-store.ts";
import { manifestKey, requestKeyOf } from "../../../shared/engine/spark/spark-batch-contract.ts";
import {
  attemptOfKey,
  discardSettledSparkJobs,
  sparkAttemptFolder,
} from "../../../shared/engine/spark/spark-job-folders.ts";
import { sweepSparkJobs } from "../../../shared/rewind/spark-job-sweep.ts";
import {
  branchRecordKey,
  flowStatePrefix,
  legacySparkJobsPrefix,
  updateStateKey,
} from "../../../shared/store/bucket-layout.ts";
import type { CheckpointsRepository, FlowResume } from "../../../shared/store/checkpoints-repository.ts";
import { stateDataKey, stateVersionKey } from "../../../shared/state/state-keys.ts";
import { IDENTIFIER_PATTERN } from "../../../shared/pipeline/identifier.ts";

const PIPELINE = "p1";
const flowName = fc.oneof(
  fc.constantFrom("spark", "spark_jobs", "update_state", "ingest", "view"),
  fc.stringMatching(IDENTIFIER_PATTERN).filter((name) => name.length <= 12),
);

describe("a Spark job's folder", () => {
  it("never lies in any flow's state folder, whatever the flows are named (a flow named spark included)", () => {
    fc.assert(
      fc.property(
        flowName,
        flowName,
        fc.nat(),
        fc.stringMatching(/^[0-9a-f]{8}$/),
        (job, other, seq, attempt) => {
          const manifest = manifestKey(PIPELINE, job, seq, attempt);
          // The request and the state staging lie beside the manifest, in the attempt's folder.
          for (const key of [
            manifest,
            requestKeyOf(manifest),
            `${sparkAttemptFolder(PIPELINE, job, seq, attempt)}state/x`,
          ])
            expect(key.startsWith(flowStatePrefix(PIPELINE, other)), `${key} in flow ${other}'s folder`).toBe(
              false,
            );
        },
      ),
    );
  });

  it("names its attempt to the state machine's resumed RunFlow", () => {
    const key = requestKeyOf(manifestKey(PIPELINE, "ingest", 12, "1a2b3c4d"));
    expect(attemptOfKey(key, "ingest", 12)).toBe("1a2b3c4d");
    expect(attemptOfKey(key, "ingest", 1)).toBeUndefined();
    expect(attemptOfKey(key, "other", 12)).toBeUndefined();
  });

  it("goes with every settled batch's once HEAD moves, and a batch above HEAD keeps its own", async () => {
    const store = new MemoryObjectStore();
    const body = new TextEncoder().encode("{}");
    for (const [seq, attempt] of [
      [1, "aaaaaaaa"],
      [3, "bbbbbbbb"],
      [3, "cccccccc"],
      [4, "dddddddd"],
    ] as const) {
      await store.put(manifestKey(PIPELINE, "ingest", seq, attempt), body);
      await store.put(
        `${sparkAttemptFolder(PIPELINE, "ingest", seq, attempt)}state/run-1/dedup/_temporary/x`,
        body,
      );
    }
    await store.put(manifestKey(PIPELINE, "other", 2, "eeeeeeee"), body);
    await discardSettledSparkJobs(store, PIPELINE, "ingest", 3);
    expect((await listAllKeys(store, "state/")).map((o) => o.key).sort()).toEqual(
      [
        manifestKey(PIPELINE, "ingest", 4, "dddddddd"),
        `${sparkAttemptFolder(PIPELINE, "ingest", 4, "dddddddd")}state/run-1/dedup/_temporary/x`,
        manifestKey(PIPELINE, "other", 2, "eeeeeeee"),
      ].sort(),
    );
  });
});

/** One object under `state/<pipeline>/`, with what it is (the reference model reads that, not its key). */
type Placed =
  | { kind: "job"; flow: string; seq: number; layout: "current" | "legacy"; age: number }
  | { kind: "state"; flow: string; age: number }
  | { kind: "other"; age: number };

/** Few names, so that the swept flows, the objects' and the checkpoints' meet often. */
const fewFlows: fc.Arbitrary<string> = fc.constantFrom("spark", "ingest", "spark_jobs", "update_state");

const placed: fc.Arbitrary<Placed> = fc.oneof(
  fc.record({
    kind: fc.constant("job" as const),
    flow: fewFlows,
    seq: fc.integer({ min: 1, max: 12 }),
    layout: fc.constantFrom("current" as const, "legacy" as const),
    age: fc.nat(100),
  }),
  fc.record({ kind: fc.constant("state" as const), flow: fewFlows, age: fc.nat(100) }),
  fc.record({ kind: fc.constant("other" as const), age: fc.nat(100) }),
);

function keyOf(object: Placed, i: number): string {
  const attempt = `a${String(i).padStart(7, "0")}`;
  if (object.kind === "job") {
    const file = ["manifest.json", "request.json", "state/run-9/windows/__ebb_bucket=3/part-0.parquet"][
      i % 3
    ]!;
    return object.layout === "current"
      ? `${sparkAttemptFolder(PIPELINE, object.flow, object.seq, attempt)}${file}`
      : `${legacySparkJobsPrefix(PIPELINE, object.flow)}${object.seq}/${attempt}/${file}`;
  }
  if (object.kind === "state") {
    const flow = { pipelineId: PIPELINE, flowId: object.flow };
    return i % 2 === 0 ? stateVersionKey(flow, i) : stateDataKey(flow, i);
  }
  return i % 2 === 0 ? updateStateKey(PIPELINE, `u${i}`, "plan.json") : branchRecordKey(PIPELINE, `b${i}`);
}

describe("VACUUM's sweep of a flow's Spark jobs", () => {
  it("deletes exactly the swept flows' settled batches' files and those past the retention, nothing else", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(placed, { maxLength: 40 }),
        fc.uniqueArray(fewFlows, { minLength: 1, maxLength: 3 }),
        fc.dictionary(fewFlows, fc.record({ head: fc.nat(12), abandonedThrough: fc.nat(12) })),
        fc.nat(100),
        async (objects, swept, checkpoints, retention) => {
          const NOW = 1_000;
          let clock = 0;
          const store = new MemoryObjectStore(() => clock);
          const keys = objects.map(keyOf);
          for (const [i, object] of objects.entries()) {
            clock = NOW - object.age;
            await store.put(keys[i]!, new Uint8Array([i % 256]));
          }
          const resume: CheckpointsRepository["resume"] = async (ref) => {
            const at = checkpoints[ref.flowId] ?? { head: 0, abandonedThrough: 0 };
            return {
              head: { seq: at.head },
              after: [],
              abandonedThrough: at.abandonedThrough,
            } satisfies FlowResume;
          };
          const env = { pipelineId: PIPELINE, stateStore: store, checkpoints: { resume } };
          const deleted: string[] = [];
          for (const flow of swept)
            deleted.push(...(await sweepSparkJobs(env, flow, [], { now: NOW, retentionMs: retention })));

          const expected = objects.flatMap((object, i) => {
            if (object.kind !== "job" || !swept.includes(object.flow)) return [];
            const at = checkpoints[object.flow] ?? { head: 0, abandonedThrough: 0 };
            const settled = object.seq <= Math.max(at.head, at.abandonedThrough);
            return settled || object.age >= retention ? [keys[i]!] : [];
          });
          expect(new Set(deleted)).toEqual(new Set(expected));
          const left = new Set((await listAllKeys(store, "")).map((o) => o.key));
          for (const key of keys) expect(left.has(key), key).toBe(!expected.includes(key));
        },
      ),
    );
  });
});
