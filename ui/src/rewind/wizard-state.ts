import type { DatasetInfo, RewindPointInfo, RewindSpec } from "../api/types.ts";

/** The wizard's choices and the one `rewind_spec` they make (pure). */

export type RewindTarget =
  | { readonly kind: "point"; readonly pointId: string }
  | { readonly kind: "timestamp"; readonly timestamp: string };

export interface WizardChoices {
  readonly target: RewindTarget | undefined;
  /** Dataset names picked (their downstreams come along when `cascade`). */
  readonly selected: ReadonlySet<string>;
  readonly cascade: boolean;
  readonly resetCheckpoints: boolean;
}

export function rewindSpec(choices: WizardChoices, datasets: readonly DatasetInfo[]): RewindSpec {
  const target = choices.target;
  if (!target) throw new Error("pick a rewind point or a timestamp first");
  return {
    ...(target.kind === "point"
      ? { rewind_point_id: target.pointId }
      : { rewind_timestamp: target.timestamp }),
    datasets: datasets
      .filter((d) => choices.selected.has(d.name))
      .map((d) => ({
        identifier: d.identifier,
        cascade: choices.cascade,
        reset_checkpoints: choices.resetCheckpoints,
      })),
  };
}

/** Per dataset of a point: its version there and now (the point affects those that moved on since). */
export function pointEffect(
  point: RewindPointInfo,
  datasets: readonly DatasetInfo[],
): { name: string; at: number; now: number | undefined; changed: boolean }[] {
  const now = new Map(datasets.map((d) => [d.identifier, d.version ?? undefined]));
  return point.datasets.map((d) => {
    const current = now.get(d.identifier);
    return {
      name: d.identifier.split(".").at(-1) ?? d.identifier,
      at: d.table_version,
      now: current,
      changed: current !== undefined && current !== d.table_version,
    };
  });
}

/** The kind of a point, from the message the API gives each kind. */
export function pointKind(point: RewindPointInfo): string {
  if (point.message.startsWith("Periodic")) return "periodic";
  if (point.message.startsWith("Dry-run")) return "dry run";
  if (point.message.includes("end of the update")) return "after update";
  return "captured";
}

const DAY_MS = 24 * 60 * 60 * 1000;

/** "Rewind to yesterday": the newest point at least a day old. */
export function yesterdayPoint(points: readonly RewindPointInfo[], now: number): RewindPointInfo | undefined {
  return points.find((p) => Date.parse(p.timestamp) <= now - DAY_MS);
}
