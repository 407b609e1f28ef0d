import { randomUUID } from "node:crypto";
import { z } from "zod";
import { flowStatePrefix } from "../store/bucket-layout.ts";
import { ObjectNotFoundError } from "../object-store/errors.ts";
import type { ObjectStore } from "../object-store/object-store.ts";
import { CheckpointStateError } from "./errors.ts";
import type { FileSetOffset } from "./source-offsets.ts";

/**
 * The set of files an `auto_loader` flow has processed, kept as the flow's source state in the object
 * store (architecture.md "Storage": `state/<pipelineId>/<flowId>/<seq>-<uuid>.json`) and referenced
 * from the checkpoint. Each batch writes one changelog naming its own files; every
 * `COMPACTION_INTERVAL` batches a snapshot of the whole set replaces the changelogs before it. State
 * files are immutable, so every checkpoint (and so every rewind point) keeps a valid reference.
 */

/** Changelogs kept after a snapshot before the next snapshot is written. */
export const COMPACTION_INTERVAL = 16;

const stateFileSchema = z.object({
  kind: z.enum(["snapshot", "changelog"]),
  files: z.array(z.string()),
});

/**
 * State files already read by this process (a warm Lambda's, the local runtime's), by key. They are
 * immutable and their keys unique (a UUID each), so a kept copy is always right; without it every
 * batch, even one that finds nothing new, would GET the snapshot and every changelog since it.
 * Bounded by the file names held, least recently used dropped first.
 */
const MAX_NAMES_HELD = 200_000;
const held = new Map<string, readonly string[]>();
let namesHeld = 0;

function hold(key: string, files: readonly string[]): void {
  held.set(key, files);
  namesHeld += files.length;
  for (const [oldest, names] of held) {
    if (namesHeld <= MAX_NAMES_HELD) break;
    held.delete(oldest);
    namesHeld -= names.length;
  }
}

export class FileSetState {
  constructor(
    /** The pipeline's store (the bucket root view). */
    private readonly store: ObjectStore,
    private readonly pipelineId: string,
    private readonly flowId: string,
  ) {}

  /** Every file processed up to and including `offset`. */
  async load(offset: FileSetOffset | undefined): Promise<Set<string>> {
    const processed = new Set<string>();
    if (!offset) return processed;
    const keys = [...(offset.snapshot ? [offset.snapshot] : []), ...offset.changelogs];
    const contents = await Promise.all(keys.map((key) => this.read(key)));
    for (const content of contents) for (const file of content.files) processed.add(file);
    return processed;
  }

  /** The files of the batch that produced `offset` (its last changelog). */
  async batchFiles(offset: FileSetOffset): Promise<readonly string[]> {
    const last = offset.changelogs.at(-1);
    return last ? (await this.read(last)).files : [];
  }

  /**
   * Writes batch `seq`'s changelog (and, when due, a snapshot of the set before it) and returns the
   * offset after the batch. `processed` is the set at `previous`.
   */
  async append(
    previous: FileSetOffset | undefined,
    processed: ReadonlySet<string>,
    seq: number,
    batchFiles: readonly string[],
    listing?: FileSetOffset["listing"],
  ): Promise<FileSetOffset> {
    const changelog = await this.write(seq, { kind: "changelog", files: [...batchFiles] });
    const fileCount = processed.size + batchFiles.length;
    const changelogs = previous?.changelogs ?? [];
    if (changelogs.length + 1 < COMPACTION_INTERVAL) {
      return {
        kind: "files",
        ...(previous?.snapshot ? { snapshot: previous.snapshot } : {}),
        changelogs: [...changelogs, changelog],
        fileCount,
        ...(listing ? { listing } : {}),
      };
    }
    const snapshot = await this.write(seq, { kind: "snapshot", files: [...processed].sort() });
    return { kind: "files", snapshot, changelogs: [changelog], fileCount, ...(listing ? { listing } : {}) };
  }

  private async write(seq: number, content: z.infer<typeof stateFileSchema>): Promise<string> {
    const key = `${flowStatePrefix(this.pipelineId, this.flowId)}${String(seq).padStart(10, "0")}-${randomUUID()}.json`;
    await this.store.put(key, new TextEncoder().encode(JSON.stringify(content)));
    return key;
  }

  private async read(key: string): Promise<{ readonly files: readonly string[] }> {
    const known = held.get(key);
    if (known) {
      // Most recently used last.
      held.delete(key);
      held.set(key, known);
      return { files: known };
    }
    const { files } = await this.fetch(key);
    hold(key, files);
    return { files };
  }

  private async fetch(key: string): Promise<z.infer<typeof stateFileSchema>> {
    let bytes: Uint8Array;
    try {
      bytes = await this.store.get(key);
    } catch (error) {
      if (error instanceof ObjectNotFoundError) {
        throw new CheckpointStateError(
          `the state file ${key} of flow ${this.flowId} is gone: reset the flow's checkpoint (reset_checkpoint_selection) or fully refresh its dataset`,
          { cause: error, data: { key } },
        );
      }
      throw error;
    }
    const parsed = stateFileSchema.safeParse(JSON.parse(new TextDecoder().decode(bytes)));
    if (!parsed.success)
      throw new CheckpointStateError(`the state file ${key} is not one Ebb wrote`, { data: { key } });
    return parsed.data;
  }
}
