import { z } from "zod";
import { BUCKET_HASHES, type BucketHash } from "./bucket-hash.ts";
import { stateSchemaSchema, type StateSchema } from "./state-schema.ts";

/**
 * A state version: the manifest JSON that names every file of a flow's operator state after one
 * batch (architecture.md "Storage"). Pure: parsing, and planning what the next version holds.
 *
 * A state table is hash-partitioned by key into `buckets`; each bucket is `snapshot? + changelogs`,
 * read in that order, last row per key winning, deletions dropped. A batch writes one file per bucket
 * it touched: a changelog, or, once a bucket has `SNAPSHOT_EVERY` changelogs, a snapshot of its merged
 * rows. Untouched buckets are carried over by reference, so every version lists all its files and no
 * older manifest is needed to read it.
 */

export const STATE_FORMAT = "ebb-state/1";

/** Buckets of a new state table. */
export const DEFAULT_BUCKETS = 16;

/** Changelogs a bucket has at least before the next write to it is a snapshot. */
export const SNAPSHOT_EVERY = 8;

/** Changelogs a bucket has at most: a lookup reads every file of a bucket it touches. */
export const MAX_CHANGELOGS = 32;

const fileSchema = z.object({ key: z.string().min(1), bytes: z.number().int().nonnegative() });

const partSchema = z.object({
  snapshot: fileSchema.optional(),
  changelogs: z.array(fileSchema),
  /** Live rows of the bucket in this version. */
  rows: z.number().int().nonnegative(),
  /** Smallest `timeColumn` of the bucket's live rows, epoch µs (absent: no time column, or all NULL). */
  minTime: z.number().optional(),
});

const tableSchema = z.object({
  schema: stateSchemaSchema,
  buckets: z.number().int().positive(),
  /**
   * The function that buckets its keys (bucket-hash.ts); absent: `md5-json`, the only one before the
   * name was kept. A name this engine does not know is refused when the version is opened.
   */
  hash: z.enum(BUCKET_HASHES).optional(),
  timeColumn: z.string().optional(),
  /** By bucket number; a bucket with no live rows has no entry. */
  parts: z.record(z.string(), partSchema),
});

export const stateManifestSchema = z.object({
  format: z.literal(STATE_FORMAT),
  seq: z.number().int().nonnegative(),
  parent: z.string().nullable(),
  /** Operators' own small facts (the watermark, the definition signature). */
  meta: z.record(z.string(), z.unknown()),
  tables: z.record(z.string(), tableSchema),
});

export type StateFile = z.infer<typeof fileSchema>;
export type StatePart = z.infer<typeof partSchema>;
export type StateTableManifest = z.infer<typeof tableSchema>;
export type StateManifest = z.infer<typeof stateManifestSchema>;

export const EMPTY_MANIFEST: StateManifest = {
  format: STATE_FORMAT,
  seq: 0,
  parent: null,
  meta: {},
  tables: {},
};

export interface TableShape {
  readonly schema: StateSchema;
  readonly buckets: number;
  readonly hash: BucketHash;
  readonly timeColumn?: string;
}

/** Files of a bucket in read order. */
export function partFiles(part: StatePart | undefined): StateFile[] {
  if (!part) return [];
  return [...(part.snapshot ? [part.snapshot] : []), ...part.changelogs];
}

/**
 * Whether the next write to this bucket is a snapshot rather than a changelog: after SNAPSHOT_EVERY
 * changelogs once they hold half the snapshot's bytes, so rewriting a bucket costs about what the
 * batches wrote to it since (not a whole-state rewrite every few batches), and at MAX_CHANGELOGS.
 */
export function snapshotDue(part: StatePart | undefined): boolean {
  const changelogs = part?.changelogs ?? [];
  if (changelogs.length >= MAX_CHANGELOGS) return true;
  if (changelogs.length < SNAPSHOT_EVERY) return false;
  const logBytes = changelogs.reduce((sum, file) => sum + file.bytes, 0);
  return 2 * logBytes >= (part?.snapshot?.bytes ?? 0);
}

/** What a batch wrote to one bucket, with the bucket's exact figures after it. */
export interface BucketWrite {
  readonly bucket: number;
  readonly kind: "changelog" | "snapshot";
  /** Undefined when the merged bucket is empty (nothing needs to be written). */
  readonly file?: StateFile;
  readonly rows: number;
  readonly minTime?: number;
}

/** The bucket after a write. Undefined: the bucket holds no live rows and is dropped from the manifest. */
export function nextPart(previous: StatePart | undefined, write: BucketWrite): StatePart | undefined {
  if (write.rows === 0) return undefined;
  const base =
    write.kind === "snapshot"
      ? { ...(write.file ? { snapshot: write.file } : {}), changelogs: [] }
      : {
          ...(previous?.snapshot ? { snapshot: previous.snapshot } : {}),
          changelogs: [...(previous?.changelogs ?? []), ...(write.file ? [write.file] : [])],
        };
  return { ...base, rows: write.rows, ...(write.minTime !== undefined ? { minTime: write.minTime } : {}) };
}

/** The table after a batch's bucket writes; untouched buckets keep their files. */
export function nextTable(
  previous: StateTableManifest | undefined,
  shape: TableShape,
  writes: readonly BucketWrite[],
): StateTableManifest {
  const parts: Record<string, StatePart> = { ...(previous?.parts ?? {}) };
  for (const write of writes) {
    const part = nextPart(parts[String(write.bucket)], write);
    if (part) parts[String(write.bucket)] = part;
    else delete parts[String(write.bucket)];
  }
  return {
    schema: shape.schema,
    buckets: shape.buckets,
    hash: shape.hash,
    ...(shape.timeColumn !== undefined ? { timeColumn: shape.timeColumn } : {}),
    parts,
  };
}

/** Buckets (of those given) that can hold a row whose time is before `boundMicros`. */
export function bucketsOlderThan(table: StateTableManifest | undefined, boundMicros: number): number[] {
  if (!table) return [];
  return Object.entries(table.parts)
    .filter(([, part]) => part.minTime !== undefined && part.minTime < boundMicros)
    .map(([bucket]) => Number(bucket));
}

/** Every data file a version references (its manifest aside). */
export function manifestFiles(manifest: StateManifest): string[] {
  const keys: string[] = [];
  for (const table of Object.values(manifest.tables))
    for (const part of Object.values(table.parts)) for (const file of partFiles(part)) keys.push(file.key);
  return keys;
}

export interface StateMetrics {
  readonly rows: number;
  readonly bytes: number;
  readonly tables: Readonly<Record<string, { readonly rows: number; readonly bytes: number }>>;
}

/** Live rows and stored bytes, per table and in all, from the manifest alone. */
export function manifestMetrics(manifest: StateManifest): StateMetrics {
  let rows = 0;
  let bytes = 0;
  const tables: Record<string, { rows: number; bytes: number }> = {};
  for (const [name, table] of Object.entries(manifest.tables)) {
    const figures = { rows: 0, bytes: 0 };
    for (const part of Object.values(table.parts)) {
      figures.rows += part.rows;
      for (const file of partFiles(part)) figures.bytes += file.bytes;
    }
    tables[name] = figures;
    rows += figures.rows;
    bytes += figures.bytes;
  }
  return { rows, bytes, tables };
}
