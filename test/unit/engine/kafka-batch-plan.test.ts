import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { KafkaPartitionRange } from "../../../shared/store/event-streams.ts";
import { planKafkaBatch, plannedRanges } from "../../../shared/engine/kafka-batch-plan.ts";
import type { KafkaOffset } from "../../../shared/engine/source-offsets.ts";

const range = (partition: number, earliest: number, end: number): KafkaPartitionRange => ({
  topic: "t",
  partition,
  earliest,
  end,
});

describe("planKafkaBatch", () => {
  it("starts at earliest, shares max_offsets_per_batch in proportion, and records where new partitions began and how far behind it is", () => {
    const result = planKafkaBatch([range(0, 2, 12), range(1, 0, 30)], undefined, "earliest", 8);
    expect(result).toEqual({
      outcome: "batch",
      plan: {
        end: { kind: "kafka", next: { t: { "0": 4, "1": 6 } }, started: { t: { "0": 2, "1": 0 } } },
        records: 8,
        caughtUp: false,
        // 10 + 30 waiting, 8 taken: the flow's lag, reported as its backlog.
        behind: 32,
      },
    });
  });

  it("plans an empty first batch at latest, so records produced later are not skipped", () => {
    const result = planKafkaBatch([range(0, 0, 5)], undefined, "latest", undefined);
    expect(result).toMatchObject({
      outcome: "batch",
      plan: { records: 0, end: { next: { t: { "0": 5 } } } },
    });
  });

  it("is caught up when nothing is waiting, and reports records lost to retention", () => {
    const start: KafkaOffset = { kind: "kafka", next: { t: { "0": 5 } } };
    expect(planKafkaBatch([range(0, 0, 5)], start, "earliest", undefined)).toEqual({ outcome: "caught-up" });
    expect(planKafkaBatch([range(0, 7, 9)], start, "earliest", undefined)).toEqual({
      outcome: "lost",
      lost: [{ topic: "t", partition: 0, from: 5, earliest: 7 }],
    });
  });

  it("reads a partition created after the first batch from its earliest", () => {
    const start: KafkaOffset = { kind: "kafka", next: { t: { "0": 5 } } };
    const result = planKafkaBatch([range(0, 0, 5), range(1, 0, 3)], start, "latest", undefined);
    expect(result).toMatchObject({
      outcome: "batch",
      plan: { end: { next: { t: { "0": 5, "1": 3 } }, started: { t: { "1": 0 } } } },
    });
  });

  it("reads every offset exactly once over any growth of the partitions (property)", () => {
    const step = fc.record({
      grow: fc.array(fc.nat(20), { minLength: 3, maxLength: 3 }),
      newPartition: fc.boolean(),
    });
    fc.assert(
      fc.property(
        fc.array(step, { minLength: 1, maxLength: 12 }),
        fc.integer({ min: 1, max: 15 }),
        (steps, max) => {
          const ends = [0];
          const read = new Map<number, number[]>();
          let offset: KafkaOffset | undefined;
          const drain = () => {
            for (let i = 0; i < 200; i++) {
              const ranges = ends.map((end, p) => range(p, 0, end));
              const result = planKafkaBatch(ranges, offset, "earliest", max);
              if (result.outcome !== "batch") return;
              const end = result.plan.end;
              expect(result.plan.records).toBeLessThanOrEqual(max);
              // The ranges both engines read (kafka-source.ts, and the Spark job's request).
              for (const { partition: p, from, until } of plannedRanges(offset, end)) {
                for (let o = from; o < until; o++) read.set(p, [...(read.get(p) ?? []), o]);
              }
              offset = end;
            }
            throw new Error("did not catch up");
          };
          for (const { grow, newPartition } of steps) {
            if (newPartition && ends.length < 3) ends.push(0);
            ends.forEach((end, p) => (ends[p] = end + grow[p]!));
            drain();
          }
          ends.forEach((end, p) => expect(read.get(p) ?? []).toEqual([...Array(end).keys()]));
        },
      ),
      { numRuns: 200 },
    );
  });
});
