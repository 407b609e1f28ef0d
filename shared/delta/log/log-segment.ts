import type { ObjectInfo } from "../../object-store/object-store.ts";
import { CorruptLogError, VersionNotFoundError } from "../errors.ts";
import { parseLogKey } from "./log-paths.ts";

/**
 * Which log files make up a snapshot (PROTOCOL.md "Checkpoints"), decided from a listing alone:
 * the newest complete checkpoint at or before the wanted version, then every commit after it up to
 * that version. Pure; listing and reading are in `snapshot-loader.ts`.
 */
export interface CommitRef {
  readonly version: number;
  readonly key: string;
  readonly lastModified: number;
  /** As listed: tells this commit file from another of the same name (a table made anew). */
  readonly etag?: string;
}

export interface CheckpointRef {
  readonly version: number;
  /** One key for a classic checkpoint, every part (in part order) for a multi-part one. */
  readonly keys: readonly string[];
  readonly lastModified: number;
  /** The parts' keys, sizes and ETags: a checkpoint written again (a table made anew) differs. */
  readonly identity: string;
}

/** The log files a listing found, by version. */
export interface LogListing {
  readonly commits: ReadonlyMap<number, CommitRef>;
  /** Complete checkpoints only: multi-part checkpoints with a missing part are left out. */
  readonly checkpoints: ReadonlyMap<number, CheckpointRef>;
}

export interface LogSegment {
  readonly version: number;
  readonly checkpoint?: CheckpointRef;
  /** Commits after the checkpoint (or from 0), ascending and contiguous, ending at `version`. */
  readonly commits: readonly CommitRef[];
}

/** Sorts listed keys into commits and complete checkpoints; other files are ignored. */
export function indexLogListing(objects: Iterable<ObjectInfo>): LogListing {
  const commits = new Map<number, CommitRef>();
  const classic = new Map<number, CheckpointRef>();
  const parts = new Map<string, { version: number; parts: number; found: Map<number, ObjectInfo> }>();
  for (const object of objects) {
    const file = parseLogKey(object.key);
    if (!file) continue;
    if (file.kind === "commit") {
      commits.set(file.version, {
        version: file.version,
        key: object.key,
        lastModified: object.lastModified,
        ...(object.etag ? { etag: object.etag } : {}),
      });
    } else if (file.kind === "checkpoint") {
      classic.set(file.version, {
        version: file.version,
        keys: [object.key],
        lastModified: object.lastModified,
        identity: identityOf([object]),
      });
    } else if (file.kind === "checkpoint-part") {
      const id = `${file.version}/${file.parts}`;
      const group = parts.get(id) ?? { version: file.version, parts: file.parts, found: new Map() };
      group.found.set(file.part, object);
      parts.set(id, group);
    }
  }
  const checkpoints = new Map<number, CheckpointRef>();
  // A multi-part checkpoint counts only when every part is there (PROTOCOL.md "Checkpoints").
  for (const group of parts.values()) {
    if (group.found.size !== group.parts || checkpoints.has(group.version)) continue;
    const ordered = [...group.found.entries()].sort(([a], [b]) => a - b).map(([, info]) => info);
    checkpoints.set(group.version, {
      version: group.version,
      keys: ordered.map((info) => info.key),
      lastModified: Math.max(...ordered.map((info) => info.lastModified)),
      identity: identityOf(ordered),
    });
  }
  // A classic checkpoint is preferred over parts for the same version: one file to read.
  for (const [version, ref] of classic) checkpoints.set(version, ref);
  return { commits, checkpoints };
}

/** Empty when a part has no ETag: such a checkpoint cannot be told from one written again. */
function identityOf(parts: readonly ObjectInfo[]): string {
  if (parts.some((info) => info.etag === "")) return "";
  return parts.map((info) => `${info.key} ${info.size} ${info.etag}`).join("\n");
}

/** The newest version the listing shows (commit or checkpoint), or `undefined` for an empty log. */
export function latestListedVersion(listing: LogListing): number | undefined {
  const versions = [...listing.commits.keys(), ...listing.checkpoints.keys()];
  return versions.length === 0 ? undefined : Math.max(...versions);
}

/** The oldest version that can be reconstructed: commit 0, or the oldest checkpoint. */
export function earliestReadableVersion(listing: LogListing): number | undefined {
  const starts = [...listing.checkpoints.keys()];
  if (listing.commits.has(0)) starts.push(0);
  return starts.length === 0 ? undefined : Math.min(...starts);
}

/**
 * The segment for `version` (default: the latest listed). Throws `VersionNotFoundError` when the
 * version is newer than the log or older than any reconstructable point, and `CorruptLogError` when a
 * commit is missing between the checkpoint and the version.
 */
export function planLogSegment(listing: LogListing, version?: number): LogSegment {
  const latest = latestListedVersion(listing);
  const earliest = earliestReadableVersion(listing);
  const available =
    latest !== undefined && earliest !== undefined && earliest <= latest ? { earliest, latest } : undefined;
  const target = version ?? latest;
  if (target === undefined || latest === undefined || target > latest || target < 0) {
    throw new VersionNotFoundError(target ?? 0, available);
  }
  const checkpointVersions = [...listing.checkpoints.keys()].filter((v) => v <= target);
  const checkpoint =
    checkpointVersions.length > 0 ? listing.checkpoints.get(Math.max(...checkpointVersions)) : undefined;
  const first = checkpoint ? checkpoint.version + 1 : 0;
  if (!checkpoint && !listing.commits.has(0)) throw new VersionNotFoundError(target, available);
  const commits: CommitRef[] = [];
  for (let v = first; v <= target; v++) {
    const commit = listing.commits.get(v);
    if (!commit) {
      throw new CorruptLogError(
        `commit ${v} is missing: the log must hold every commit from ${first} to ${target}`,
        { data: { missingVersion: v, from: first, to: target } },
      );
    }
    commits.push(commit);
  }
  return { version: target, ...(checkpoint ? { checkpoint } : {}), commits };
}
