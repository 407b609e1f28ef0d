import { checkCheckpoint, checkLastCheckpoint, type CheckpointContent } from "./checkpoint-rules.ts";
import {
  applyCommit,
  checkCommit,
  emptyState,
  parseCommit,
  writtenByEbb,
  type TableState,
} from "./commit-rules.ts";
import { Findings, type Violation } from "./violations.ts";

/**
 * Validates a table's `_delta_log` against PROTOCOL.md, pure: the caller reads the files.
 *
 * 1. Every name in the log folder is a log file the protocol defines.
 * 2. Commits are replayed in order from version 0 (or from a checkpoint when log cleanup has
 *    removed the commits before it); each commit Ebb wrote (`commitInfo.engineInfo` "Ebb/...") is
 *    checked against the state before it. Commits other engines wrote only move the state.
 * 3. Each checkpoint at the version of a commit Ebb wrote is checked against the replayed state.
 * 4. `_last_checkpoint` is checked against the checkpoint it names.
 */
export interface LogContents {
  /** Names of the files under `_delta_log/` (no folder), with their sizes. */
  readonly names: readonly string[];
  readonly commits: ReadonlyMap<number, string>;
  readonly checkpoints: ReadonlyMap<number, CheckpointContent>;
  readonly lastCheckpoint?: string;
}

const LOG_FILE = [
  /^\d{20}\.json$/,
  /^\d{20}\.checkpoint\.parquet$/,
  /^\d{20}\.checkpoint\.\d{10}\.\d{10}\.parquet$/,
  /^\d{20}\.checkpoint\.[0-9a-f-]{36}\.(?:json|parquet)$/,
  /^\d{20}\.\d{20}\.compacted\.json$/,
  /^\d{20}\.crc$/,
  /^_last_checkpoint$/,
  /^_sidecars\/.+\.parquet$/,
  /^_commits\/.+$/,
];

export function validateLog(log: LogContents): Violation[] {
  const findings = new Findings();
  for (const name of log.names) {
    // Hidden files (Hadoop's `.<name>.crc` checksums beside Spark's commits) are not part of the log.
    if (name.startsWith(".")) continue;
    if (!LOG_FILE.some((pattern) => pattern.test(name)))
      findings.add("log.file-name", `${name} is not a Delta log file name`);
  }
  const versions = [...log.commits.keys()].sort((a, b) => a - b);
  for (let i = 1; i < versions.length; i++) {
    if (versions[i] !== versions[i - 1]! + 1)
      findings.add("log.contiguous", `commits jump from ${versions[i - 1]} to ${versions[i]}`);
  }
  const first = versions[0];
  // Replay is only exact from version 0; after log cleanup the state before the oldest commit is unknown.
  let state: TableState | undefined = first === 0 ? emptyState() : undefined;
  for (const version of versions) {
    const previous = log.checkpoints.get(version - 1);
    if (!state && previous) {
      state = emptyState();
      applyCommit(previous.rows, state);
    }
    // A file is held to the rules, its parsing included, only when Ebb wrote it.
    const parsing = new Findings();
    const actions = parseCommit(log.commits.get(version)!, version, parsing);
    const ebb = writtenByEbb(actions);
    if (ebb) findings.list.push(...parsing.list);
    if (ebb) checkCommit(version, actions, state ?? seededState(actions), findings);
    if (state) applyCommit(actions, state);
    const checkpoint = log.checkpoints.get(version);
    if (checkpoint && ebb) checkCheckpoint(checkpoint, state, findings);
  }
  for (const [version, checkpoint] of log.checkpoints) {
    if (!log.commits.has(version)) checkCheckpoint(checkpoint, undefined, findings);
  }
  if (log.lastCheckpoint !== undefined) {
    let version: unknown;
    try {
      version = (JSON.parse(log.lastCheckpoint) as { version?: unknown }).version;
    } catch {
      version = undefined;
    }
    checkLastCheckpoint(log.lastCheckpoint, log.checkpoints.get(Number(version)), findings);
  }
  return findings.list;
}

/** Without the log's start, a commit is checked against only the protocol and metadata it carries. */
function seededState(actions: ReturnType<typeof parseCommit>): TableState {
  const state = emptyState();
  applyCommit(
    actions.filter((a) => a.kind === "protocol" || a.kind === "metaData"),
    state,
  );
  return state;
}
