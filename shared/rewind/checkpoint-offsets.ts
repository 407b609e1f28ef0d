import {
  consumedUpTo,
  sourceOffsetSchema,
  type FileSetOffset,
  singleSourceOffsetSchema,
  type SingleSourceOffset,
  type TableOffset,
} from "../engine/source-offsets.ts";
import type { FlowDefinition } from "../pipeline/definition-schema.ts";
import type { Checkpoint } from "../store/checkpoints-repository.ts";

/**
 * Reading a flow's source position out of a checkpoint. A flow reads one source, and the engine keeps
 * its offset either as the checkpoint's `offsets` value itself or under one key of it; both are
 * accepted, validated with the engine's own schema.
 */
export function sourceOffsetOf(checkpoint: Checkpoint | undefined): SingleSourceOffset | undefined {
  if (!checkpoint) return undefined;
  const whole = sourceOffsetSchema.safeParse(checkpoint.offsets);
  // A stream-stream join: `source`'s position (the joined stream's is `joinedOffsetOf`).
  if (whole.success) return whole.data.kind === "join" ? whole.data.source : whole.data;
  for (const value of Object.values(checkpoint.offsets)) {
    const parsed = singleSourceOffsetSchema.safeParse(value);
    if (parsed.success) return parsed.data;
  }
  return undefined;
}

/** A stream-stream join flow's position in its joined stream. */
export function joinedOffsetOf(checkpoint: Checkpoint | undefined): TableOffset | undefined {
  const whole = sourceOffsetSchema.safeParse(checkpoint?.offsets);
  return whole.success && whole.data.kind === "join" ? whole.data.joined : undefined;
}

/** The last version of `upstream` the flow's checkpoint has read (-1 before any). */
export function consumedVersionOf(
  flow: FlowDefinition,
  upstream: string,
  checkpoint: Checkpoint | undefined,
): number {
  const offset =
    flow.join?.stream === upstream
      ? joinedOffsetOf(checkpoint)
      : flow.source.type === "stream" && flow.source.dataset === upstream
        ? tableOffsetOf(checkpoint)
        : undefined;
  return offset ? consumedUpTo(offset) : -1;
}

export function tableOffsetOf(checkpoint: Checkpoint | undefined): TableOffset | undefined {
  const offset = sourceOffsetOf(checkpoint);
  return offset?.kind === "table" ? offset : undefined;
}

export function fileSetOffsetOf(checkpoint: Checkpoint | undefined): FileSetOffset | undefined {
  const offset = sourceOffsetOf(checkpoint);
  return offset?.kind === "files" ? offset : undefined;
}

/**
 * The state files a checkpoint references (auto_loader file-set snapshot and changelogs, state ref,
 * the operator state version's manifest, which lists its own files).
 */
export function stateFilesOf(checkpoint: Checkpoint | undefined): string[] {
  if (!checkpoint) return [];
  const files = fileSetOffsetOf(checkpoint);
  // Each once: an auto_loader checkpoint's stateRef is its last changelog, and a missing file named
  // twice would be reported twice.
  return [
    ...new Set([
      ...(files?.snapshot ? [files.snapshot] : []),
      ...(files?.changelogs ?? []),
      ...(checkpoint.stateRef ? [checkpoint.stateRef] : []),
      ...(checkpoint.stateVersion ? [checkpoint.stateVersion] : []),
    ]),
  ];
}
