import { ACTION_KINDS, type Action, type CommitInfo } from "./actions.ts";
import { InvalidLogFileError } from "../errors.ts";

/**
 * A commit file's text (PROTOCOL.md "Delta Log Entries": newline-delimited JSON, one action per
 * line) as actions in file order. Blank lines are skipped; action kinds this reader does not know are
 * dropped (new kinds come with a table feature, which the protocol check refuses). `file` names the
 * file in errors.
 */
export function parseCommitFile(text: string, file: string): Action[] {
  const actions: Action[] = [];
  const lines = text.split("\n");
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!.trim();
    if (line === "") continue;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch (cause) {
      throw new InvalidLogFileError(file, i + 1, "not valid JSON", { cause });
    }
    if (typeof value !== "object" || value === null || Array.isArray(value)) {
      throw new InvalidLogFileError(file, i + 1, "an action must be a JSON object");
    }
    const kinds = Object.keys(value).filter(isActionKind);
    if (kinds.length > 1) {
      throw new InvalidLogFileError(file, i + 1, `one action per line, found ${kinds.join(", ")}`);
    }
    const kind = kinds[0];
    if (kind === undefined) continue;
    const body = (value as Record<string, unknown>)[kind];
    if (typeof body !== "object" || body === null) {
      throw new InvalidLogFileError(file, i + 1, `${kind} must be a JSON object`);
    }
    actions.push({ [kind]: body } as Action);
  }
  return actions;
}

function isActionKind(key: string): key is (typeof ACTION_KINDS)[number] {
  return (ACTION_KINDS as readonly string[]).includes(key);
}

/** The commit's `commitInfo`, if it has one. */
export function findCommitInfo(actions: readonly Action[]): CommitInfo | undefined {
  for (const action of actions) if ("commitInfo" in action) return action.commitInfo;
  return undefined;
}

/**
 * The commit's timestamp: its `inCommitTimestamp` (PROTOCOL.md "In-Commit Timestamps"), else the
 * commit file's modification time, as the protocol and Spark date it (`commitInfo.timestamp` is when
 * the writer began the commit, not when it succeeded). Ebb writes in-commit timestamps on the tables
 * it creates, so their times are exact in every engine and survive a copy of the table.
 */
export function commitTimestamp(commitInfo: CommitInfo | undefined, fileModified: number): number {
  if (typeof commitInfo?.inCommitTimestamp === "number") return commitInfo.inCommitTimestamp;
  return fileModified;
}

/** Whether dating the commit needs its file's modification time (it has no in-commit timestamp). */
export function needsFileTime(commitInfo: CommitInfo | undefined): boolean {
  return typeof commitInfo?.inCommitTimestamp !== "number";
}
