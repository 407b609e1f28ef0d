import { ebb } from "../api/client.ts";
import type { DatasetInfo, RewindSpec } from "../api/types.ts";
import { previewRewind as preview, type RewindPreview } from "../../../shared/client/rewind-preview.ts";

export type { AffectedDataset, RewindPreview, UndoPreview } from "../../../shared/client/rewind-preview.ts";

/** The review step's preview: the API's dry run of `spec` and each table's change feed since its target. */
export function previewRewind(
  pipelineId: string,
  spec: RewindSpec,
  datasets: readonly DatasetInfo[],
  signal: AbortSignal,
): Promise<RewindPreview> {
  return preview(ebb, pipelineId, spec, datasets, signal);
}
