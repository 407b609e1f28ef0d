import type { OnsetResult } from "../client/ebb-client.ts";

/**
 * What `ebb onset` found, in lines: the first version whose changes match, the last good commit
 * before it, and the rewind that goes back between them (the seed's midpoint timestamp). Pure.
 */
export function onsetOutcome(table: string, onset: OnsetResult): string {
  if (!onset.found)
    return `${table}: no change from version ${onset.starting_version} on matches the predicate\n`;
  const lines = [
    `${table}: first matching change in version ${onset.first_bad_version}, committed ${onset.first_bad_commit_time}`,
  ];
  if (onset.rewind_timestamp === undefined) {
    lines.push(`no commit before it to rewind to (the scan started at version ${onset.starting_version})`);
  } else {
    lines.push(`last good: version ${onset.last_good_version}, committed ${onset.last_good_commit_time}`);
    lines.push(
      `rewind between them: ebb rewind <pipeline-id> --timestamp '${onset.rewind_timestamp}' --dry-run`,
    );
  }
  return `${lines.join("\n")}\n`;
}
