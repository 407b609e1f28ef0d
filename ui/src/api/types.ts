import type { UpdateInfo } from "../../../shared/client/ebb-client.ts";

/** Shapes of the API's answers the UI reads (api.md), beyond what the typed client names. */

export type {
  DatasetInfo,
  EventInfo,
  FlowProgress,
  RewindPointInfo,
  UpdateInfo,
} from "../../../shared/client/ebb-client.ts";

export interface PipelineStatus {
  readonly pipeline_id: string;
  readonly name: string;
  readonly state: string;
  readonly definition_version: number;
  readonly last_modified?: number;
}

export interface SourceSpec {
  readonly type: string;
  readonly dataset?: string;
  readonly path?: string;
}

export interface DatasetSpec {
  readonly type: string;
  readonly name: string;
  readonly sql?: string;
  readonly flows?: readonly { readonly name: string; readonly source?: SourceSpec; readonly sql?: string }[];
  readonly expectations?: readonly { readonly name: string; readonly on_violation?: string }[];
}

export interface PipelineDetail {
  readonly pipeline_id: string;
  readonly name: string;
  readonly state: string;
  readonly definition_version: number;
  readonly last_modified?: number;
  readonly spec: {
    readonly name: string;
    readonly catalog: string;
    readonly schema: string;
    readonly configuration?: Readonly<Record<string, string>>;
    readonly continuous?: boolean;
    readonly definition: { readonly datasets: readonly DatasetSpec[] };
  };
  readonly latest_updates?: readonly { update_id: string; state: string; creation_time: number }[];
  readonly rewind?: {
    readonly blocked: boolean;
    readonly latest_rewind_point?: { readonly rewind_point_id: string; readonly timestamp: string };
  };
}

export interface RewindSpecDataset {
  readonly identifier: string;
  readonly cascade: boolean;
  readonly reset_checkpoints: boolean;
}

export interface RewindSpec {
  readonly rewind_point_id?: string;
  readonly rewind_timestamp?: string;
  readonly datasets?: readonly RewindSpecDataset[];
  readonly dry_run?: boolean;
}

/** An update as the timeline reads it. */
export type Update = UpdateInfo & {
  readonly end_time?: number;
  readonly full_refresh?: boolean;
  readonly full_refresh_selection?: readonly string[];
  readonly refresh_selection?: readonly string[];
  readonly refresh?: string;
  readonly reset_mode?: string;
  readonly rewind_spec?: RewindSpec;
};
