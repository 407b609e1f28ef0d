import type { OnsetResult } from "../client/ebb-client.ts";

/**
 * What `ebb onset` found, in lines: the first version whose changes match, the last good commit
 * before it, the rewind that goes back between them (the seed's midpoint timestamp) and the owning
 * pipeline's newest rewind point before it. Pure.
 */
export function onsetOutcome(table: string, onset: OnsetResult): string {
  if (!onset.found)
    return `${table}: no change from version ${onset.starting_version} on matches the predicate\n`;
  const lines = [
    `${table}: first matching change in version ${onset.first_bad_version}, committed ${onset.first_bad_commit_time}`,
  ];
  const pipeline = onset.pipeline_id ?? "<pipeline-id>";
  if (onset.rewind_timestamp === undefined) {
    lines.push(`no commit before it to rewind to (the scan started at version ${onset.starting_version})`);
  } else {
    lines.push(`last good: version ${onset.last_good_version}, committed ${onset.last_good_commit_time}`);
    lines.push(
      `rewind between them: ebb rewind ${pipeline} --timestamp '${onset.rewind_timestamp}' --dry-run`,
    );
  }
  const point = onset.rewind_point;
  if (point) {
    const version = point.datasets.find((dataset) => dataset.identifier === table)?.table_version;
    lines.push(
      `newest rewind point before it: ${point.rewind_point_id}, ${point.timestamp} (${table} at version ${version}): ` +
        `ebb rewind ${pipeline} --point ${point.rewind_point_id} --dry-run`,
    );
  } else if (onset.pipeline_id !== undefined) {
    lines.push(`pipeline ${onset.pipeline_id} has no live rewind point from before it`);
  }
  return `${lines.join("\n")}\n`;
}
