import { randomUUID } from "node:crypto";
import { readFile, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import type { DuckSession } from "../../duck/duck-session.ts";
import type { ScratchFolder } from "../../duck/scratch-folder.ts";
import { quoteLiteral } from "../../duck/sql-text.ts";
import type { ObjectStore } from "../../object-store/object-store.ts";
import type { RemoveFile } from "./actions.ts";
import { readLastCheckpointHint } from "./log-listing.ts";
import { checkpointKey, LAST_CHECKPOINT_KEY } from "./log-paths.ts";
import { snapshotTombstones } from "./log-replay.ts";
import type { Snapshot } from "../read/snapshot.ts";
import { tableProperties } from "../table/table-properties.ts";
import { assertWritable } from "../table/writer-features.ts";

/**
 * Classic single-file V1 checkpoints (PROTOCOL.md "Checkpoints", "Classic checkpoint", "V1 Spec").
 *
 * - One row per action, each action kind a struct column (PROTOCOL.md "Checkpoint Schema"):
 *   `protocol`, `metaData`, `txn`, `add` (stats as a JSON string, `partitionValues` as
 *   `map<string,string>`), `remove` tombstones not yet expired (without `stats` and `tags`), live
 *   `domainMetadata`. No `commitInfo`, no `cdc` (PROTOCOL.md "Checkpoints": must not be preserved).
 * - Written by DuckDB from newline-delimited JSON read with this explicit schema, so the parquet
 *   types are fixed whatever the rows hold; Spark, delta-rs and DuckDB read it as plain parquet.
 * - Then `_last_checkpoint` (PROTOCOL.md "Last Checkpoint File Schema"): `version`, `size` (the
 *   number of actions), `sizeInBytes`, `numOfAddFiles`. It is only a hint, moved forward only.
 */

const MAP = "MAP(VARCHAR, VARCHAR)";
const CHECKPOINT_COLUMNS: Readonly<Record<string, string>> = {
  // The feature lists too: without them a reader-3 / writer-7 table reads as featureless.
  protocol:
    "STRUCT(minReaderVersion INTEGER, minWriterVersion INTEGER, readerFeatures VARCHAR[], writerFeatures VARCHAR[])",
  metaData:
    `STRUCT(id VARCHAR, name VARCHAR, description VARCHAR, format STRUCT(provider VARCHAR, options ${MAP}), ` +
    `schemaString VARCHAR, partitionColumns VARCHAR[], configuration ${MAP}, createdTime BIGINT)`,
  txn: "STRUCT(appId VARCHAR, version BIGINT, lastUpdated BIGINT)",
  add:
    `STRUCT(path VARCHAR, partitionValues ${MAP}, size BIGINT, modificationTime BIGINT, dataChange BOOLEAN, ` +
    `stats VARCHAR, tags ${MAP})`,
  remove:
    `STRUCT(path VARCHAR, deletionTimestamp BIGINT, dataChange BOOLEAN, extendedFileMetadata BOOLEAN, ` +
    `partitionValues ${MAP}, size BIGINT)`,
  domainMetadata: "STRUCT(domain VARCHAR, configuration VARCHAR, removed BOOLEAN)",
};

const ADD_WITHOUT_STATS =
  `STRUCT(path VARCHAR, partitionValues ${MAP}, size BIGINT, modificationTime BIGINT, dataChange BOOLEAN, ` +
  `tags ${MAP})`;

export interface LastCheckpoint {
  readonly version: number;
  readonly size: number;
  readonly sizeInBytes: number;
  readonly numOfAddFiles: number;
}

/** Whether the commit of `version` should be followed by a checkpoint (`delta.checkpointInterval`). */
export function isCheckpointDue(snapshot: Snapshot): boolean {
  return (
    snapshot.version > 0 && snapshot.version % tableProperties(snapshot.metadata).checkpointInterval === 0
  );
}

/** The checkpoint rows of `snapshot` and its `tombstones`: one object per action, keyed by its kind. */
export function checkpointRows(
  snapshot: Snapshot,
  tombstones: ReadonlyMap<string, RemoveFile>,
  now: number,
): Record<string, unknown>[] {
  const tombstoneCutoff = now - tableProperties(snapshot.metadata).deletedFileRetentionMs;
  const rows: Record<string, unknown>[] = [{ protocol: snapshot.protocol }, { metaData: snapshot.metadata }];
  for (const txn of snapshot.txns.values()) rows.push({ txn });
  for (const domain of snapshot.domains?.values() ?? []) rows.push({ domainMetadata: domain });
  for (const add of snapshot.files.values()) {
    rows.push({
      add: {
        path: add.path,
        partitionValues: add.partitionValues,
        size: add.size,
        modificationTime: add.modificationTime,
        dataChange: false, // PROTOCOL.md: a checkpoint's adds do not change data
        stats: add.stats ?? null,
        tags: add.tags ?? null,
      },
    });
  }
  for (const remove of tombstones.values()) {
    if ((remove.deletionTimestamp ?? 0) <= tombstoneCutoff) continue; // expired tombstone
    rows.push({
      remove: {
        path: remove.path,
        deletionTimestamp: remove.deletionTimestamp ?? null,
        dataChange: false,
        extendedFileMetadata: remove.extendedFileMetadata ?? null,
        partitionValues: remove.partitionValues ?? null,
        size: remove.size ?? null,
      },
    });
  }
  return rows;
}

/**
 * Writes the checkpoint of `snapshot` and moves `_last_checkpoint` to it. A table Ebb cannot write
 * is refused first (a checkpoint of a table with features Ebb does not know would drop their fields,
 * e.g. row tracking's `add.baseRowId`); an existing checkpoint of the version (another
 * writer's) is kept as it is, never overwritten.
 */
export async function writeCheckpoint(
  store: ObjectStore,
  duck: DuckSession,
  scratch: ScratchFolder,
  snapshot: Snapshot,
  now: number,
): Promise<LastCheckpoint> {
  assertWritable(snapshot.protocol, snapshot.metadata);
  const rows = checkpointRows(snapshot, await snapshotTombstones(snapshot), now);
  const statsAsJson = tableProperties(snapshot.metadata).checkpointStatsAsJson;
  const id = randomUUID();
  const json = path.join(scratch.dir, `checkpoint-${id}.ndjson`);
  const parquet = path.join(scratch.dir, `checkpoint-${id}.parquet`);
  try {
    await writeFile(json, rows.map((row) => JSON.stringify(row)).join("\n") + "\n");
    // `delta.checkpoint.writeStatsAsJson=false`: the add struct has no stats field (PROTOCOL.md "Checkpoints").
    const columns = Object.entries(
      statsAsJson ? CHECKPOINT_COLUMNS : { ...CHECKPOINT_COLUMNS, add: ADD_WITHOUT_STATS },
    )
      .map(([name, type]) => `${quoteLiteral(name)}: ${quoteLiteral(type)}`)
      .join(", ");
    await duck.run(
      `COPY (SELECT * FROM read_json(${quoteLiteral(json)}, columns = {${columns}}, format = 'newline_delimited')) ` +
        `TO ${quoteLiteral(parquet)} (FORMAT parquet, COMPRESSION snappy)`,
    );
    const bytes = await readFile(parquet);
    // Never over another writer's checkpoint of this version: a reader may be reading it, and
    // Spark's may carry fields Ebb's would not. The version is checkpointed either way.
    const key = checkpointKey(snapshot.version);
    const written = (await store.putIfAbsent(key, bytes)) === "created";
    const last: LastCheckpoint = {
      version: snapshot.version,
      size: rows.length,
      sizeInBytes: written ? bytes.byteLength : ((await store.head(key))?.size ?? bytes.byteLength),
      numOfAddFiles: snapshot.files.size,
    };
    // The hint is its writer's to move, when the checkpoint is another's.
    if (written) await moveLastCheckpointForward(store, last);
    return last;
  } finally {
    await rm(json, { force: true });
    await rm(parquet, { force: true });
  }
}

async function moveLastCheckpointForward(store: ObjectStore, last: LastCheckpoint): Promise<void> {
  const body = new TextEncoder().encode(JSON.stringify(last));
  for (;;) {
    const current = await store.head(LAST_CHECKPOINT_KEY);
    if (!current) {
      if ((await store.putIfAbsent(LAST_CHECKPOINT_KEY, body)) === "created") return;
      continue;
    }
    // An unreadable hint is replaced; one removed since the head is created again on the next round.
    const currentVersion = (await readLastCheckpointHint(store))?.version ?? -1;
    if (currentVersion >= last.version) return;
    if ((await store.putIfMatch(LAST_CHECKPOINT_KEY, body, current.etag)).outcome === "written") return;
  }
}
