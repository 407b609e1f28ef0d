import { z } from "zod";
import type { PipelineEvent } from "../store/event-log-repository.ts";
import { EVENT_TYPES, eventTime, type RewindEventInput } from "./rewind-events.ts";

/**
 * A rewind point (semantics.md "Rewind points"): a `rewind_summary` event whose id is the
 * `rewind_point_id` and whose `details.rewind_summary` records, for a consistent cut of the pipeline,
 * every dataset's table version and every flow's checkpoint `seq`. Captures, dry runs and finished
 * rewinds all write one; only those with `dry_run: true` are points to rewind to (as in Databricks).
 */

export const PERIODIC_MESSAGE = "Periodic rewind summary capturing current table versions";

export const rewindSummarySchema = z.object({
  dry_run: z.boolean(),
  /** ISO-8601 UTC: the time of the cut. */
  timestamp: z.string(),
  datasets: z.array(
    z.object({
      /** `catalog.schema.table`. */
      identifier: z.string(),
      table_version: z.number().int().nonnegative(),
      /** The table's `metaData.id` at that version: a dataset dropped since has another. */
      table_id: z.string().optional(),
    }),
  ),
  /** Seq 0 is the root (no checkpoint yet). */
  flows: z.array(z.object({ flow: z.string(), seq: z.number().int().nonnegative() })),
});
export type RewindSummary = z.infer<typeof rewindSummarySchema>;

/** Why a summary was written. */
export type SummaryKind = "periodic" | "update-end" | "dry-run" | "rewind";

const MESSAGES: Readonly<Record<SummaryKind, string>> = {
  periodic: PERIODIC_MESSAGE,
  "update-end": "Rewind summary capturing table versions at the end of the update",
  "dry-run": "Dry-run rewind summary recording the validated rewind target",
  rewind: "Rewind summary of the completed rewind",
};

/** A captured cut: per dataset its table version (and table id), per flow its checkpoint seq. */
export interface PipelineCut {
  /** Epoch ms. */
  readonly time: number;
  readonly datasets: ReadonlyMap<string, { readonly version: number; readonly tableId: string }>;
  readonly flows: ReadonlyMap<string, number>;
}

/** Why a point was recorded: a capture, the end of an update, or a dry run's validated target. */
export type PointKind = Exclude<SummaryKind, "rewind">;

/**
 * A point's kind, from the message its kind writes (MESSAGES). A dry run's point repeats the point or
 * time it rehearsed, so pickers pass over it. A message no kind writes reads as a capture.
 */
export function pointKindOf(message: string): PointKind {
  const kind = (Object.keys(MESSAGES) as SummaryKind[]).find((k) => MESSAGES[k] === message);
  return kind === undefined || kind === "rewind" ? "periodic" : kind;
}

/** A live point as the API lists it. */
export interface RewindPoint {
  readonly rewindPointId: string;
  readonly kind: PointKind;
  /** Epoch ms of the cut. */
  readonly time: number;
  readonly message: string;
  /** Epoch ms after which it is gone. */
  readonly expiresAt: number;
  readonly cut: PipelineCut;
}

export interface SummaryEventInput {
  readonly catalog: string;
  readonly schema: string;
  readonly kind: SummaryKind;
  readonly cut: PipelineCut;
  readonly now: number;
  readonly retentionMs: number;
  readonly updateId?: string;
}

/** The `rewind_summary` event recording `cut` (pure). */
export function rewindSummaryEvent(input: SummaryEventInput): RewindEventInput {
  const summary: RewindSummary = {
    dry_run: input.kind !== "rewind",
    timestamp: new Date(input.cut.time).toISOString(),
    datasets: [...input.cut.datasets].map(([name, at]) => ({
      identifier: `${input.catalog}.${input.schema}.${name}`,
      table_version: at.version,
      table_id: at.tableId,
    })),
    flows: [...input.cut.flows].map(([flow, seq]) => ({ flow, seq })),
  };
  return {
    event_type: EVENT_TYPES.rewindSummary,
    level: "INFO",
    message: MESSAGES[input.kind],
    ...(input.updateId !== undefined ? { updateId: input.updateId } : {}),
    details: { rewind_summary: summary },
    timestamp: input.now,
    retentionMs: input.retentionMs,
  };
}

/**
 * The point a `rewind_summary` event records, or undefined when it is not a point to rewind to (a
 * finished rewind's summary, `dry_run: false`) or not one this module wrote. `retentionMs` is the
 * pipeline's current rewind retention: it dates the point's expiry.
 */
export function readRewindPoint(event: PipelineEvent, retentionMs: number): RewindPoint | undefined {
  if (event.event_type !== EVENT_TYPES.rewindSummary) return undefined;
  const parsed = rewindSummarySchema.safeParse(event.details["rewind_summary"]);
  if (!parsed.success || !parsed.data.dry_run) return undefined;
  const summary = parsed.data;
  const time = Date.parse(summary.timestamp);
  if (Number.isNaN(time)) return undefined;
  return {
    rewindPointId: event.id,
    kind: pointKindOf(event.message),
    time,
    message: event.message,
    expiresAt: eventTime(event) + retentionMs,
    cut: {
      time,
      datasets: new Map(
        summary.datasets.map((d) => [
          d.identifier.split(".").at(-1) as string,
          { version: d.table_version, tableId: d.table_id ?? "" },
        ]),
      ),
      flows: new Map(summary.flows.map((f) => [f.flow, f.seq])),
    },
  };
}
