import fc from "fast-check";
import { captureRewindPoint } from "../../../shared/rewind/rewind-points.ts";
import type { RewindHarness } from "./rewind-harness.ts";

/**
 * What the model-based rewind properties (test/property/stateful-*, incremental-views) share: the
 * steps they draw, the JSON files they land, the event times they write and read back, and the
 * rewind points they capture with the model's state at each.
 */

/** Land `files` (each a list of rows) as new files, run an update, and maybe capture a point. */
export interface UpdateStep<R> {
  readonly kind: "update";
  readonly files: readonly (readonly R[])[];
  readonly capture: boolean;
}

/** Rewind to one of the points not made stale, chosen by `pick`, by its id or by its time. */
export interface RewindStep {
  readonly kind: "rewind";
  readonly pick: number;
  readonly byTimestamp: boolean;
}

export type StatefulStep<R> =
  UpdateStep<R> | RewindStep | { readonly kind: "checkpointReset" } | { readonly kind: "fullRefresh" };

/** An update of up to `maxFiles` files of 1–4 rows; two in three capture a point. */
export function updateStep<R>(row: fc.Arbitrary<R>, maxFiles = 2): fc.Arbitrary<UpdateStep<R>> {
  return fc.record({
    kind: fc.constant("update" as const),
    files: fc.array(fc.array(row, { minLength: 1, maxLength: 4 }), { maxLength: maxFiles }),
    capture: fc.constantFrom(true, true, false),
  });
}

export const rewindStep: fc.Arbitrary<RewindStep> = fc.record({
  kind: fc.constant("rewind" as const),
  pick: fc.nat(),
  byTimestamp: fc.boolean(),
});

/** Updates and rewinds by the given weights, checkpoint resets and full refreshes at weight 1 each. */
export function statefulStep<R>(
  row: fc.Arbitrary<R>,
  weights: { readonly update: number; readonly rewind: number },
): fc.Arbitrary<StatefulStep<R>> {
  return fc.oneof(
    { weight: weights.update, arbitrary: updateStep(row) },
    { weight: weights.rewind, arbitrary: rewindStep },
    { weight: 1, arbitrary: fc.constant({ kind: "checkpointReset" as const }) },
    { weight: 1, arbitrary: fc.constant({ kind: "fullRefresh" as const }) },
  );
}

/** Lands `rows` as the next JSON-lines file (`f0000.json`, `f0001.json`, …), recorded in `files`. */
export async function landJsonFile<R>(
  h: RewindHarness,
  files: Map<string, readonly R[]>,
  rows: readonly R[],
  toJson: (row: R) => unknown = (row) => row,
): Promise<void> {
  const name = `f${String(files.size).padStart(4, "0")}.json`;
  files.set(name, [...rows]);
  await h.land(name, rows.map((row) => JSON.stringify(toJson(row))).join("\n") + "\n");
}

/** Event times are written as whole minutes after this instant. */
const EVENT_TIME_BASE = Date.parse("2026-01-01T12:00:00Z");

/** A TIMESTAMP literal `minute` minutes after the base, as a landed JSON file writes it. */
export function eventStamp(minute: number): string {
  return new Date(EVENT_TIME_BASE + minute * 60_000).toISOString().replace("T", " ").slice(0, 19);
}

/** A TIMESTAMP as the table reader returns it, as minutes after the base. */
export function eventMinute(value: unknown): number {
  return (epochMillis(value) - EVENT_TIME_BASE) / 60_000;
}

function epochMillis(value: unknown): number {
  if (value instanceof Date) return value.getTime();
  if (typeof value === "object" && value !== null && "micros" in value)
    return Number((value as { micros: bigint }).micros) / 1000;
  if (typeof value === "bigint" || typeof value === "number") return Number(value) / 1000;
  return Date.parse(`${String(value).replace(" ", "T")}Z`);
}

/** The rewind points a sequence captured, each with the model's state when it was captured. */
export class ModelPoints<S> {
  private readonly points: { id: string; time: number; state: S; stale: boolean }[] = [];

  constructor(private readonly h: RewindHarness) {}

  /** Captures a point of the pipeline now (none when nothing changed), with the model's `state`. */
  async capture(state: S): Promise<void> {
    const point = await captureRewindPoint(this.h.env());
    if (point) this.points.push({ id: point.rewindPointId, time: point.time, state, stale: false });
  }

  /** Rewinds to the step's pick of the live points: the model's state there, or undefined when none is live. */
  async rewind(step: RewindStep): Promise<S | undefined> {
    const live = this.points.filter((p) => !p.stale);
    if (live.length === 0) return undefined;
    const target = live[step.pick % live.length]!;
    await this.h.rewind(
      step.byTimestamp
        ? { rewind_timestamp: new Date(target.time).toISOString() }
        : { rewind_point_id: target.id },
    );
    return target.state;
  }

  /** A full refresh (or the points' retention passing): no point so far is rewound to any more. */
  makeStale(): void {
    for (const point of this.points) point.stale = true;
  }
}
