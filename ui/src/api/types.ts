/** Shapes of the API's answers the UI reads: the response schemas' types (shared/api/response-schemas.ts). */

export type {
  DatasetInfo,
  DatasetSpec,
  EventInfo,
  FlowProgress,
  PipelineDetail,
  PipelineStatus,
  RewindPointInfo,
  UpdateInfo,
  UpdateInfo as Update,
} from "../../../shared/client/ebb-client.ts";

/** A dataset of a `rewind_spec` the rewind wizard sends. */
export interface RewindSpecDataset {
  readonly identifier: string;
  readonly cascade: boolean;
  readonly reset_checkpoints: boolean;
}

/** The `rewind_spec` the rewind wizard sends (a request, not an answer). */
export interface RewindSpec {
  readonly rewind_point_id?: string;
  readonly rewind_timestamp?: string;
  readonly datasets?: readonly RewindSpecDataset[];
  readonly dry_run?: boolean;
}
