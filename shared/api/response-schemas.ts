import { z } from "zod";
import { EVENT_LEVELS, MATURITY_LEVELS, PIPELINE_STATES, UPDATE_STATES } from "../store/record-states.ts";

/**
 * The success body of every route (api.md), as strict zod schemas: the single source of the response
 * types. The handlers are typed by them (`apiRoute`), the OpenAPI document describes them
 * (openapi-document.ts), the client's types are inferred from them (ebb-client.ts), and a contract
 * test parses each route's real answer with them, so a field the API adds or misspells fails there.
 * Objects are strict; only what the API answers open-ended is a record: event `details`, a pipeline's
 * definition (its own schema, definition-schema.ts), a table's rows and Delta's commit info.
 */

const strict = z.strictObject;
/** Open-ended by nature: rows, Delta commit info, event details, definitions. */
const openObject = z.record(z.string(), z.unknown());
const isoTime = z.string();
const epochMs = z.number().int();

const ignoredSettings = z.array(strict({ field: z.string(), reason: z.string() }));

/**
 * A dataset of a definition as the API answers it back: open-ended (definition-schema.ts is its
 * schema, and checked it on the way in); the fields named are the ones readers such as the web UI use.
 */
export const datasetSpec = z.looseObject({
  type: z.string(),
  name: z.string(),
  sql: z.string().optional(),
  flows: z
    .array(
      z.looseObject({
        name: z.string(),
        source: z
          .looseObject({ type: z.string(), dataset: z.string().optional(), path: z.string().optional() })
          .optional(),
        sql: z.string().optional(),
      }),
    )
    .optional(),
  expectations: z.array(z.looseObject({ name: z.string(), on_violation: z.string().optional() })).optional(),
});

/** The request shape of a definition (pipeline-views.ts `PipelineSpec`). */
const pipelineSpec = strict({
  name: z.string(),
  catalog: z.string(),
  schema: z.string(),
  configuration: z.record(z.string(), z.string()),
  continuous: z.boolean(),
  definition: strict({ datasets: z.array(datasetSpec) }),
});

const latestUpdate = strict({ update_id: z.string(), state: z.enum(UPDATE_STATES), creation_time: epochMs });

const pipelineStatus = strict({
  pipeline_id: z.string(),
  name: z.string(),
  state: z.enum(PIPELINE_STATES),
  definition_version: z.number().int(),
  last_modified: epochMs,
  active_update_id: z.string().optional(),
  latest_updates: z.array(latestUpdate),
});

const rewindStatus = strict({
  blocked: z.boolean(),
  blocked_by_update_id: z.string().optional(),
  latest_rewind_point: strict({ rewind_point_id: z.string(), timestamp: isoTime }).optional(),
  rewound: z.boolean(),
  replay_pending: z.boolean().optional(),
  rewound_by_update_id: z.string().optional(),
  rewound_at: isoTime.optional(),
  rewind_point_id: z.string().optional(),
  rewind_timestamp: z.string().optional(),
  /** A rewind of some datasets: which, and whether it went downstream or reset their checkpoints. */
  datasets: z
    .array(strict({ identifier: z.string(), cascade: z.boolean(), reset_checkpoints: z.boolean() }))
    .optional(),
  message: z.string().optional(),
});

const flowStateProgress = strict({
  operator_names: z.array(z.string()),
  num_rows_total: z.number(),
  state_bytes: z.number(),
  num_rows_dropped_by_watermark: z.number(),
  num_duplicates_dropped: z.number(),
  num_windows_emitted: z.number(),
  num_joined_rows: z.number().optional(),
  num_left_outer_rows: z.number().optional(),
  watermark: z.string().nullable(),
});

export const flowProgress = strict({
  dataset: z.string().optional(),
  batches: z.number().int(),
  rows_in: z.number(),
  rows_out: z.number(),
  /** RUNNING while batches commit; COMPLETED once caught up; FAILED. */
  status: z.string(),
  /** A materialized view's latest refresh: `INCREMENTAL` or `FULL_RECOMPUTE`. */
  refresh: z.string().optional(),
  state: flowStateProgress.optional(),
});

/** update-views.ts `updateInfo`: Databricks' `UpdateInfo` fields plus Ebb's. */
export const updateInfo = strict({
  update_id: z.string(),
  pipeline_id: z.string(),
  state: z.enum(UPDATE_STATES),
  cause: z.string(),
  creation_time: epochMs,
  mode: z.string(),
  full_refresh: z.boolean(),
  full_refresh_selection: z.array(z.string()).optional(),
  refresh_selection: z.array(z.string()).optional(),
  validate_only: z.boolean(),
  refresh: z.string().optional(),
  selection: z.array(z.string()).optional(),
  reset_mode: z.string().optional(),
  reset_checkpoint_selection: z.array(z.string()).optional(),
  /** As the request sent it (parseRewindSpec checked it; its own module knows the rest). */
  rewind_spec: z
    .looseObject({
      rewind_point_id: z.string().optional(),
      rewind_timestamp: z.string().optional(),
      datasets: z
        .array(
          strict({ identifier: z.string(), cascade: z.boolean(), reset_checkpoints: z.boolean().optional() }),
        )
        .optional(),
      dry_run: z.boolean().optional(),
    })
    .optional(),
  /** Ebb's own: the branch the update ran on (docs/branches.md); absent for live's updates. */
  branch: z.string().optional(),
  /** The run's place in an ordered run of several pipelines (POST /api/2.0/ebb/runs). */
  ordered_run: strict({
    request_id: z.string(),
    position: z.number().int(),
    of: z.number().int(),
  }).optional(),
  /** The cut across pipelines this rewind is one of (POST /api/2.0/ebb/rewinds). */
  cut: strict({ request_id: z.string() }).optional(),
  /** A publish of a branch (POST …/branches/{name}/publish): the branch it makes live. */
  publish: strict({ branch: z.string() }).optional(),
  engine: z.string().optional(),
  definition_version: z.number().int(),
  last_modified: epochMs,
  end_time: epochMs.optional(),
  error: strict({ error_code: z.string(), message: z.string() }).optional(),
  progress: z.record(z.string(), flowProgress).optional(),
});

export const rewindPoint = strict({
  rewind_point_id: z.string(),
  timestamp: isoTime,
  message: z.string(),
  /** Why it was recorded; a `dry-run` point is a dry run's record of its target. */
  kind: z.enum(["periodic", "update-end", "dry-run"]),
  expires_at: isoTime,
  datasets: z.array(strict({ identifier: z.string(), table_version: z.number().int() })),
  flows: z.array(strict({ flow: z.string(), checkpoint_seq: z.number().int() })),
  /** False once the point's table data is gone (a VACUUM outside Ebb); the reason says what. */
  restorable: z.boolean().optional(),
  not_restorable_reason: z.string().optional(),
});

export const pipelineEvent = strict({
  id: z.string(),
  sequence: strict({ control_plane_seq_no: z.number() }),
  origin: strict({
    pipeline_id: z.string(),
    pipeline_name: z.string(),
    update_id: z.string(),
    flow_id: z.string().optional(),
    flow_name: z.string().optional(),
    dataset_name: z.string().optional(),
    batch_id: z.number().int().optional(),
    /** Ebb's own: the branch of an update on a branch. */
    branch: z.string().optional(),
  }),
  timestamp: isoTime,
  message: z.string(),
  level: z.enum(EVENT_LEVELS),
  maturity_level: z.enum(MATURITY_LEVELS),
  error: strict({
    exceptions: z.array(
      strict({
        class_name: z.string(),
        message: z.string(),
        stack: z
          .array(
            strict({
              declaring_class: z.string(),
              method_name: z.string(),
              file_name: z.string(),
              line_number: z.number().int(),
            }),
          )
          .optional(),
      }),
    ),
    fatal: z.boolean(),
  }).optional(),
  event_type: z.string(),
  /** Open-ended: each event type has its own details (docs/events.md). */
  details: openObject,
});

export const datasetInfo = strict({
  name: z.string(),
  identifier: z.string(),
  type: z.string(),
  /** Null before the table's first commit. */
  version: z.number().int().nullable(),
  row_count: z.number().nullable(),
  last_commit_time: isoTime.nullable(),
  flows: z.array(z.string()),
  upstreams: z.array(z.string()),
});

const column = strict({ name: z.string(), type: z.string() });

export const flowStateInfo = strict({
  pipeline_id: z.string(),
  flow: z.string(),
  checkpoint_seq: z.number().int(),
  rewind_point_id: z.string().optional(),
  /** The state version's key; null for the empty state. */
  state_version: z.string().nullable(),
  watermark: z.string().nullable(),
  tables: z.array(
    strict({
      name: z.string(),
      key_columns: z.array(column),
      value_columns: z.array(column),
      num_rows: z.number().int(),
    }),
  ),
  rows: z.array(strict({ table: z.string(), key: openObject, value: openObject })),
  next_page_token: z.string().optional(),
});

const statementChunk = strict({
  chunk_index: z.number().int(),
  row_offset: z.number().int(),
  row_count: z.number().int(),
  data_array: z.array(z.array(z.string().nullable())),
  next_chunk_index: z.number().int().optional(),
  next_chunk_internal_link: z.string().optional(),
});

/** Databricks' `StatementResponse` (JSON_ARRAY, inline). */
export const statementResponse = strict({
  statement_id: z.string(),
  status: strict({
    state: z.enum(["SUCCEEDED", "FAILED"]),
    error: strict({ error_code: z.string(), message: z.string() }).optional(),
  }),
  manifest: strict({
    format: z.literal("JSON_ARRAY"),
    schema: strict({
      column_count: z.number().int(),
      columns: z.array(
        strict({
          name: z.string(),
          position: z.number().int(),
          type_name: z.string(),
          type_text: z.string(),
        }),
      ),
    }),
    total_chunk_count: z.number().int(),
    chunks: z.array(
      strict({ chunk_index: z.number().int(), row_offset: z.number().int(), row_count: z.number().int() }),
    ),
    total_row_count: z.number().int(),
    truncated: z.boolean(),
  }).optional(),
  result: statementChunk.optional(),
  notices: z.array(z.string()).optional(),
});

const paged = { next_page_token: z.string().optional(), prev_page_token: z.string().optional() };

const upstreamVersion = strict({ pipeline_id: z.string(), dataset: z.string(), version: z.number().int() });

/** A route that answers nothing more than success. */
const nothing = strict({});

export const createPipelineResponse = z.union([
  strict({ pipeline_id: z.string(), ignored_settings: ignoredSettings.optional() }),
  /** `dry_run`: the settings as they would be written. */
  strict({ effective_settings: pipelineSpec, ignored_settings: ignoredSettings.optional() }),
]);
export const listPipelinesResponse = strict({
  statuses: z.array(pipelineStatus),
  next_page_token: z.string().optional(),
});
/** A refresh stopped while resetting datasets: updates that do not reset them again are refused. */
const refreshIncomplete = strict({ update_id: z.string(), datasets: z.array(z.string()), since: isoTime });
export const getPipelineResponse = pipelineStatus.extend({
  spec: pipelineSpec,
  rewind: rewindStatus,
  refresh_incomplete: refreshIncomplete.optional(),
});
/** An edit replaced the flows of a table that holds data (control/pipelines/replaced-flows.ts). */
const replacedFlowsWarning = strict({
  dataset: z.string(),
  removed_flows: z.array(z.string()),
  new_flows: z.array(z.string()),
  message: z.string(),
});
/** An edit moved a flow that has read its source to another table (control/pipelines/moved-flows.ts). */
const movedFlowWarning = strict({
  flow: z.string(),
  from_dataset: z.string(),
  to_dataset: z.string(),
  message: z.string(),
});
export const editPipelineResponse = strict({
  definition_version: z.number().int(),
  ignored_settings: ignoredSettings.optional(),
  warnings: z.array(z.union([replacedFlowsWarning, movedFlowWarning])).optional(),
});
export const startUpdateResponse = strict({ update_id: z.string() });

/** A branch of a pipeline (docs/branches.md). */
const branchInfo = strict({
  name: z.string(),
  pipeline_id: z.string(),
  created_at: z.string(),
  rewind_point_id: z.string().nullable(),
  /** The point's time, ISO-8601. */
  point_timestamp: z.string(),
  tables: z.array(
    strict({
      name: z.string(),
      /** POINT: a rewound table, from the point; LIVE: one the rewind left, from live as it was. */
      from: z.enum(["POINT", "LIVE"]),
      /** Live's version the branch began from; null: empty at the point. */
      source_version: z.number().int().nullable(),
      /** The branch table's latest version (GET one branch only); null: no table on the branch. */
      branch_version: z.number().int().nullable().optional(),
    }),
  ),
  flows: z.array(strict({ flow: z.string(), live_seq: z.number().int(), branch_seq: z.number().int() })),
});
/** `POST …/updates` with `rewind_spec.branch`: the branch made, and no update. */
export const createBranchResponse = strict({ branch: branchInfo });
/** `POST …/updates`: an update started, or (`rewind_spec.branch`) a branch made. */
export const startUpdateOrBranchResponse = z.union([startUpdateResponse, createBranchResponse]);
export const listBranchesResponse = strict({
  branches: z.array(branchInfo),
  next_page_token: z.string().optional(),
});
export const getBranchResponse = createBranchResponse;
export const publishBranchResponse = strict({
  branch: z.string(),
  /** The publish update: GET …/updates/{id} follows it; its branch_published event has the versions. */
  update_id: z.string(),
  /** The point captured before the publish: rewinding to it undoes the publish. */
  rewind_point_id: z.string().nullable(),
  /** The plan, upstream first: the branch's version each table gets, and live's version before it. */
  tables: z.array(
    strict({
      table: z.string(),
      branch_version: z.number().int().nullable(),
      live_version: z.number().int().nullable(),
    }),
  ),
});
const sampledRows = strict({ count: z.number().int(), samples: z.array(openObject) });
export const branchDiffResponse = strict({
  branch: z.string(),
  tables: z.array(
    strict({
      name: z.string(),
      branch_version: z.number().int().nullable(),
      live_version: z.number().int().nullable(),
      /** The AUTO CDC keys (SCD type 1) the rows were matched by; null: whole rows only. */
      keys: z.array(z.string()).nullable(),
      only_on_branch: sampledRows,
      only_on_live: sampledRows,
      changed: strict({
        count: z.number().int(),
        samples: z.array(strict({ key: openObject, branch: openObject, live: openObject })),
      }).optional(),
    }),
  ),
});
export const listUpdatesResponse = strict({ updates: z.array(updateInfo), ...paged });
export const getUpdateResponse = strict({ update: updateInfo });
export const listEventsResponse = strict({ events: z.array(pipelineEvent), ...paged });
export const listDatasetsResponse = strict({ datasets: z.array(datasetInfo) });
export const listRewindPointsResponse = strict({ rewind_points: z.array(rewindPoint), ...paged });
export const tableHistoryResponse = strict({
  /** Delta's commit info, newest first (DESCRIBE HISTORY's columns). */
  history: z.array(openObject),
});
export const tableChangesResponse = strict({
  starting_version: z.number().int(),
  ending_version: z.number().int(),
  /** The table's rows with `_change_type`, `_commit_version`, `_commit_timestamp`. */
  changes: z.array(openObject),
  next_page_token: z.string().optional(),
});
export const queryTableResponse = strict({
  version: z.number().int(),
  timestamp: isoTime,
  rows: z.array(openObject),
  truncated: z.boolean(),
});
export const vacuumTableResponse = strict({
  table: z.string(),
  pipeline_id: z.string().optional(),
  dry_run: z.boolean(),
  retention_hours: z.number(),
  protected_versions: z.array(z.number().int()),
  /** The branches whose logs name files of the table: every file their latest snapshot names is kept. */
  protected_branches: z.array(z.string()).optional(),
  files_protected: z.number().int(),
  files_within_retention: z.number().int(),
  files: z.array(strict({ path: z.string(), size: z.number() })),
  /** Bucket keys of the state files of the table's flows that no live point needs, and what their Spark jobs left. */
  state_files: z.array(z.string()),
  /** Set for a table no pipeline owns: nothing but the retention protected its files. */
  notice: z.string().optional(),
});
export const findOnsetResponse = strict({
  found: z.boolean(),
  starting_version: z.number().int(),
  first_bad_version: z.number().int().optional(),
  first_bad_commit_time: isoTime.optional(),
  last_good_version: z.number().int().optional(),
  last_good_commit_time: isoTime.optional(),
  rewind_timestamp: z.string().optional(),
  /** The pipeline that owns the table, when one does. */
  pipeline_id: z.string().optional(),
  /** That pipeline's newest live rewind point from before the onset, when it has one. */
  rewind_point: rewindPoint.optional(),
});
export const optimizeTableResponse = strict({
  read_version: z.number().int(),
  dry_run: z.boolean(),
  target_file_size_bytes: z.number().int(),
  /** Only when it committed. */
  version: z.number().int().optional(),
  metrics: strict({
    num_bins: z.number().int(),
    num_files_removed: z.number().int(),
    num_bytes_removed: z.number(),
    num_files_skipped: z.number().int(),
    num_files_added: z.number().int().optional(),
    num_bytes_added: z.number().optional(),
  }),
});
/** A request over several pipelines (a cut, an ordered run): its id, and each pipeline's part, in order. */
const severalPipelinesResponse = <Part extends z.core.$ZodLooseShape>(part: Part) =>
  strict({
    request_id: z.string(),
    dry_run: z.boolean(),
    pipelines: z.array(
      strict({
        pipeline_id: z.string(),
        name: z.string(),
        /** Unless dry_run: the update the request started for this pipeline. */
        update_id: z.string().optional(),
      }).extend(part),
    ),
  });
export const rewindToCutResponse = severalPipelinesResponse({
  rewind_point_id: z.string(),
  timestamp: isoTime,
  upstream_versions: z.array(upstreamVersion),
  /** Each table's rewind: RESTORE to target_version, or TRUNCATE / DROP (target_version null). */
  datasets: z.array(
    strict({
      dataset: z.string(),
      action: z.enum(["RESTORE", "TRUNCATE", "DROP"]),
      target_version: z.number().int().nullable(),
      /** The table's version now (RESTORE only). */
      version: z.number().int().optional(),
    }),
  ),
});
export const orderedRunResponse = severalPipelinesResponse({
  position: z.number().int(),
  reads: z.array(strict({ pipeline_id: z.string(), dataset: z.string(), flow: z.string() })),
});
/** The OpenAPI document itself: its own standard's schema. */
export const openApiResponse = openObject;
export {
  nothing as emptyResponse,
  statementChunk as statementChunkResponse,
  rewindPoint as rewindPointResponse,
};

export type UpdateInfo = z.infer<typeof updateInfo>;
export type FlowProgress = z.infer<typeof flowProgress>;
export type RewindPointInfo = z.infer<typeof rewindPoint>;
export type EventInfo = z.infer<typeof pipelineEvent>;
export type DatasetInfo = z.infer<typeof datasetInfo>;
export type FlowStateInfo = z.infer<typeof flowStateInfo>;
export type StatementResponse = z.infer<typeof statementResponse>;
export type PipelineStatus = z.infer<typeof pipelineStatus>;
export type PipelineDetail = z.infer<typeof getPipelineResponse>;
export type DatasetSpec = z.infer<typeof datasetSpec>;
