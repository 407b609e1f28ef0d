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

/** The kind of a point, in words. */
export function pointKind(point: RewindPointInfo): string {
  if (point.kind === "periodic") return "periodic";
  if (point.kind === "dry-run") return "dry run";
  if (point.kind === "update-end") return "after update";
  return "captured";
}

/** A dry run's record of the target it rehearsed: it repeats a point or time already on offer. */
export function isDryRunPoint(point: RewindPointInfo): boolean {
  return point.kind === "dry-run";
}

/** The points on offer: every point but dry runs' records, unless asked for. */
export function offeredPoints(points: readonly RewindPointInfo[], withDryRuns: boolean): RewindPointInfo[] {
  return points.filter((p) => withDryRuns || !isDryRunPoint(p));
}

const DAY_MS = 24 * 60 * 60 * 1000;

/** "Rewind to the latest point": the newest point that is no dry run's record. */
export function latestPoint(points: readonly RewindPointInfo[]): RewindPointInfo | undefined {
  return points.find((p) => !isDryRunPoint(p));
}

/** "Rewind to yesterday": the newest point at least a day old (no dry run's record). */
export function yesterdayPoint(points: readonly RewindPointInfo[], now: number): RewindPointInfo | undefined {
  return points.find((p) => !isDryRunPoint(p) && Date.parse(p.timestamp) <= now - DAY_MS);
}
