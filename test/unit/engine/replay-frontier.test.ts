import { describe, expect, it } from "vitest";
import { kafkaBehind, kafkaRecordsReplayed, replayFrontier } from "../../../shared/engine/replay-frontier.ts";
import type { Checkpoint } from "../../../shared/store/checkpoints-repository.ts";
import type { KafkaOffset } from "../../../shared/engine/source-offsets.ts";

const flow = { pipelineId: "p", flowId: "f" };
const checkpoint = (
  seq: number,
  parent: number,
  offsets: object,
  extra: Partial<Checkpoint> = {},
): Checkpoint => ({
  flow,
  seq,
  parent,
  status: "COMMITTED",
  offsets: offsets as Checkpoint["offsets"],
  plannedAt: seq,
  ...extra,
});
const kafka = (next: Record<string, number>, started?: Record<string, number>): KafkaOffset => ({
  kind: "kafka",
  next: { t: next },
  ...(started ? { started: { t: started } } : {}),
});

describe("the replay frontier", () => {
  it("is the abandoned branch's HEAD after a move back, else what HEAD carries", () => {
    const target = checkpoint(1, 0, { at: 1 });
    const abandoned = [checkpoint(2, 1, { at: 2 }), checkpoint(3, 2, { at: 3 })];
    expect(replayFrontier({ seq: 1, checkpoint: target }, abandoned, 3)).toEqual({ at: 3 });
    // A batch planned after the move is not abandoned; an unfinished one is not a frontier.
    const planned = checkpoint(4, 1, { at: 9 }, { status: "PLANNED" });
    expect(replayFrontier({ seq: 1, checkpoint: target }, [...abandoned, planned], 3)).toEqual({ at: 3 });
    // A second rewind during a replay keeps the first's frontier.
    const replaying = checkpoint(3, 2, { at: 3 }, { replayUntil: { at: 7 } });
    expect(replayFrontier({ seq: 1, checkpoint: target }, [replaying], 3)).toEqual({ at: 7 });
    const carried = checkpoint(5, 1, { at: 2 }, { replayUntil: { at: 3 } });
    expect(replayFrontier({ seq: 5, checkpoint: carried }, [], 3)).toEqual({ at: 3 });
    expect(replayFrontier({ seq: 5, checkpoint: checkpoint(5, 1, { at: 4 }) }, [], 3)).toBeUndefined();
  });

  it("counts a Kafka batch's offsets below the frontier, partition by partition", () => {
    const frontier = kafka({ "0": 10, "1": 5 });
    // Partition 0 reads 6..12 (4 replayed), partition 1 reads 0..3 (3), partition 2 is new.
    const start = kafka({ "0": 6, "1": 0, "2": 0 });
    const end = kafka({ "0": 12, "1": 3, "2": 4 });
    expect(kafkaRecordsReplayed(start, end, frontier)).toBe(7);
    expect(kafkaBehind(end, frontier)).toBe(true);
    expect(kafkaBehind(kafka({ "0": 12, "1": 5 }), frontier)).toBe(false);
    // The first batch starts where `started` says.
    expect(kafkaRecordsReplayed(undefined, kafka({ "0": 8 }, { "0": 2 }), frontier)).toBe(6);
  });
});
