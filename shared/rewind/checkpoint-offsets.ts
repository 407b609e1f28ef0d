import {
  consumedUpTo,
  sourceOffsetSchema,
  type FileSetOffset,
  type SourceOffset,
  type TableOffset,
} from "../engine/source-offsets.ts";
import type { Checkpoint } from "../store/checkpoints-repository.ts";

/**
 * Reading a flow's source position out of a checkpoint. A flow reads one source, and the engine keeps
 * its offset either as the checkpoint's `offsets` value itself or under one key of it; both are
 * accepted, validated with the engine's own schema.
 */
export function sourceOffsetOf(checkpoint: Checkpoint | undefined): SourceOffset | undefined {
  if (!checkpoint) return undefined;
  const whole = sourceOffsetSchema.safeParse(checkpoint.offsets);
  if (whole.success) return whole.data;
  for (const value of Object.values(checkpoint.offsets)) {
    const parsed = sourceOffsetSchema.safeParse(value);
    if (parsed.success) return parsed.data;
  }
  return undefined;
}

export function tableOffsetOf(checkpoint: Checkpoint | undefined): TableOffset | undefined {
  const offset = sourceOffsetOf(checkpoint);
  return offset?.kind === "table" ? offset : undefined;
}

export function fileSetOffsetOf(checkpoint: Checkpoint | undefined): FileSetOffset | undefined {
  const offset = sourceOffsetOf(checkpoint);
  return offset?.kind === "files" ? offset : undefined;
}

/** The last source version the checkpoint has read from (-1 before any). */
export function consumedVersion(checkpoint: Checkpoint | undefined): number {
  const offset = tableOffsetOf(checkpoint);
  return offset ? consumedUpTo(offset) : -1;
}

/**
 * The state files a checkpoint references (auto_loader file-set snapshot and changelogs, state ref,
 * the operator state version's manifest, which lists its own files).
 */
export function stateFilesOf(checkpoint: Checkpoint | undefined): string[] {
  if (!checkpoint) return [];
  const files = fileSetOffsetOf(checkpoint);
  return [
    ...(files?.snapshot ? [files.snapshot] : []),
    ...(files?.changelogs ?? []),
    ...(checkpoint.stateRef ? [checkpoint.stateRef] : []),
    ...(checkpoint.stateVersion ? [checkpoint.stateVersion] : []),
  ];
}
