import { z } from "zod";
import { caseInsensitiveEnum, strictObject } from "../pipeline/strict-object.ts";
import { refreshRequestShape } from "../rewind/refresh-request.ts";
import { UPDATE_CAUSES } from "../store/updates-repository.ts";
import { BATCH_ENGINES } from "../pipeline/batch-engines.ts";
import { PARAMETER_TYPE } from "../sql/statement-parameters.ts";

/**
 * The body and query of every route (api.md), as strict zod schemas: the single source of the
 * request types. Unknown fields are refused by name. The pipeline definition and the `rewind_spec`
 * are checked by their own modules (`validatePipeline`, `parseRewindSpec`), which know their rules
 * and error codes; here they are only required to be there.
 */

/** A query parameter sent twice arrives as a list; a single value is expected. */
const queryText = () =>
  z.string({
    error: (issue) => (Array.isArray(issue.input) ? "is given more than once: send it once" : undefined),
  });

/**
 * A query-string whole number in decimal digits (`1e3`, `0x10`, ` 5` are refused), at least `min`.
 * The API decides, not JavaScript's `Number()`.
 */
const queryInt = (min: number) =>
  queryText()
    .regex(/^[0-9]{1,15}$/, { error: "must be a whole number in decimal digits (e.g. 100)" })
    .transform(Number)
    .pipe(z.number().min(min, { error: `must be at least ${min}` }));

/** Query-string booleans: `true`/`false` in any case. */
const queryBoolean = queryText()
  .trim()
  .toLowerCase()
  .pipe(z.enum(["true", "false"]))
  .transform((value) => value === "true");
const maxResults = queryInt(1).pipe(z.number().max(1000, { error: "must be at most 1000" }));

/** `definition`: the datasets (flows, SQL) of the pipeline spec. */
const definitionBody = strictObject({ datasets: z.array(z.unknown()) });

/** `libraries`: definition files (YAML or JSON) in Ebb's bucket; the other library kinds are not Ebb's. */
const librariesBody = z
  .array(strictObject({ file: strictObject({ path: z.string().trim().min(1) }) }))
  .min(1);

/**
 * `project`: a pipeline project as Spark Declarative Pipelines writes one (`ebb deploy` sends it): the
 * spec's text and the project's files by path relative to the spec (shared/project reads them).
 */
const projectBody = strictObject({
  spec: z.string(),
  spec_path: z.string().trim().min(1).default("spark-pipeline.yml"),
  files: z.record(z.string().min(1), z.string()),
});

/** Databricks fields Ebb accepts and reports as ignored (databricks-settings.ts says why). */
const ignoredSettings = Object.fromEntries(
  [
    "budget_policy_id",
    "channel",
    "clusters",
    "deployment",
    "development",
    "edition",
    "environment",
    "event_log",
    "filters",
    "notifications",
    "parameters",
    "parent_path",
    "photon",
    "restart_window",
    "root_path",
    "run_as",
    "serverless",
    "serverless_compute_id",
    "storage",
    "tags",
    "usage_policy_id",
  ].map((field) => [field, z.unknown().optional()]),
);

/**
 * The pipeline settings: Ebb's own (`definition` inline) and the Databricks `CreatePipeline` /
 * `EditPipeline` fields a user's script sends (`target`, `libraries`, `trigger`, …). Which are
 * required is decided once `libraries` files are read (databricks-settings.ts).
 */
const pipelineSettings = {
  name: z.string().optional(),
  catalog: z.string().optional(),
  schema: z.string().optional(),
  /** The legacy name of `schema`. */
  target: z.string().optional(),
  configuration: z.record(z.string(), z.unknown()).optional(),
  continuous: z.boolean().optional(),
  definition: definitionBody.optional(),
  libraries: librariesBody.optional(),
  project: projectBody.optional(),
  trigger: strictObject({ manual: strictObject({}).optional(), cron: z.unknown().optional() }).optional(),
  /** `false`: refuse a name another pipeline has (Databricks' default); left out, names may repeat. */
  allow_duplicate_names: z.boolean().optional(),
  ...ignoredSettings,
};

/** A definition's datasets sent beside the settings, as the YAML file has them. */
const settingsHints = {
  datasets: 'the datasets go inside definition: {"name": …, "definition": {"datasets": […]}}',
};

/** `POST /api/2.0/pipelines`. */
export const createPipelineBody = strictObject(
  {
    ...pipelineSettings,
    /** Validate and answer the `effective_settings` without creating anything. */
    dry_run: z.boolean().optional(),
    /** Ebb assigns pipeline ids: reported as ignored. */
    id: z.unknown().optional(),
  },
  settingsHints,
);

/** `PUT /api/2.0/pipelines/{id}`: any of the settings; what is left out keeps its current value. */
export const editPipelineBody = strictObject(
  {
    ...pipelineSettings,
    /** The Databricks SDKs repeat the path's id in the body; it must match. */
    pipeline_id: z.string().optional(),
    id: z.string().optional(),
    /** Optimistic concurrency: refuse the edit if the current version is no longer this one. */
    expected_definition_version: z.coerce.number().int().positive().optional(),
    /** Databricks' optimistic concurrency: refuse the edit if the pipeline changed since (epoch ms). */
    expected_last_modified: z.number().int().optional(),
  },
  settingsHints,
);

/** `POST /api/2.0/pipelines/{id}/updates`: the refresh fields are the rewind module's own shape. */
export const startUpdateBody = strictObject({
  cause: caseInsensitiveEnum(UPDATE_CAUSES, (v) => v.toUpperCase()).default("USER_ACTION"),
  ...refreshRequestShape,
  validate_only: z.boolean().default(false),
  /** Checked by `parseRewindSpec`, with its own error codes. */
  rewind_spec: z.unknown().optional(),
  /** Ebb's own: the engine of every batch of this update (a replay or backfill on Spark), over `pipelines.engine`. */
  engine: z.enum(BATCH_ENGINES).optional(),
  /** Ebb's own: run on this branch of the pipeline (docs/branches.md "Replay on a branch"). */
  branch: z.string().optional(),
});

/** Two or more pipelines, each once, in any order: the order they are taken in comes from their reads. */
const severalPipelineIds = (one: string) =>
  z
    .array(z.uuid({ error: "must be a pipeline id (a UUID such as the one create answered)" }))
    .min(2, { error: `names fewer than two pipelines: ${one}` })
    .refine((ids) => new Set(ids).size === ids.length, { error: "names a pipeline twice: name each once" });

/** `POST /api/2.0/ebb/rewinds`: several pipelines to one cut (docs/rewind-across-pipelines.md). */
export const cutRewindBody = strictObject({
  pipeline_ids: severalPipelineIds("rewind one pipeline with POST …/updates"),
  /** A point of the cut's upstream pipeline (exactly one of this and rewind_timestamp; checked by parseRewindSpec). */
  rewind_point_id: z.string().optional(),
  rewind_timestamp: z.string().optional(),
  dry_run: z.boolean().default(false),
});

/** `POST /api/2.0/ebb/runs`: several pipelines run one after another, upstreams first. */
export const orderedRunBody = strictObject({
  pipeline_ids: severalPipelineIds("run one pipeline with POST …/updates"),
  /** Each run refreshes its pipeline FULL (a backfill of the chain). */
  full_refresh: z.boolean().default(false),
  dry_run: z.boolean().default(false),
});

/** `POST /api/2.0/pipelines/{id}/stop`, `POST …/rewind-points`: no fields. */
export const emptyBody = strictObject({});

/** `POST /api/2.0/tables/{full_name}/query`. */
export const queryTableBody = strictObject({
  /** A SELECT over the table, which it reads as `t` (and by its name); default `SELECT * FROM t`. */
  sql: z.string().trim().min(1).optional(),
  version: z.number().int().nonnegative().optional(),
  /** ISO-8601 with a zone, or UTC `yyyy-MM-dd HH:mm:ss`. */
  timestamp: z.string().optional(),
  limit: z.number().int().positive().max(10_000).default(1000),
});

export const CHANGE_TYPES = ["insert", "update_preimage", "update_postimage", "delete"] as const;

/** `POST /api/2.0/tables/{full_name}/vacuum`. */
export const vacuumTableBody = strictObject({
  /** Default: the table's `delta.deletedFileRetentionDuration` (168 hours unless set). */
  retain_hours: z.number().nonnegative().optional(),
  allow_short_retention: z.boolean().default(false),
  dry_run: z.boolean().default(false),
});

/** `POST /api/2.0/tables/{full_name}/onset`. */
export const onsetBody = strictObject({
  /** A SQL condition on the table's columns selecting the bad rows. */
  predicate: z.string().trim().min(1),
  /** @default ["insert", "update_postimage"] (bad inserts or updates; `["delete"]` for a bad delete) */
  change_types: z.array(z.enum(CHANGE_TYPES)).min(1).default(["insert", "update_postimage"]),
  /** Scan from this version (default: after the latest RESTORE or refresh, else 1). */
  starting_version: z.number().int().nonnegative().optional(),
});

/** `POST /api/2.0/tables/{full_name}/optimize` (an empty body compacts to the table's target size). */
export const optimizeTableBody = strictObject({
  /** Size of the files written, and below which a file is compacted; default the table's `delta.targetFileSize`. */
  target_file_size_bytes: z.number().int().positive().optional(),
  /** Return the plan, write nothing. */
  dry_run: z.boolean().default(false),
});

/**
 * `POST /api/2.0/sql/statements`: the Databricks Statement Execution API's `ExecuteStatementRequest`.
 * Ebb has no warehouses and answers every statement when it is done, inline in JSON_ARRAY chunks of at
 * most `EBB_ANSWER_MAX_BYTES` (the first in the answer); `byte_limit` truncates the result as on
 * Databricks. `warehouse_id`, `wait_timeout`, `on_wait_timeout` and `query_tags` are accepted and
 * reported as ignored; another `disposition` or `format` is refused.
 */
export const executeStatementBody = strictObject({
  statement: z.string().trim().min(1),
  warehouse_id: z.string().optional(),
  /** The default catalog and schema of names with fewer parts (`USE CATALOG`, `USE SCHEMA`). */
  catalog: z.string().trim().min(1).optional(),
  schema: z.string().trim().min(1).optional(),
  /** Named parameter markers (`:name`); without a `type` the value is a STRING. */
  parameters: z
    .array(
      strictObject({
        name: z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, { error: "must be a marker name such as day" }),
        value: z.string().nullable().optional(),
        type: z
          .string()
          .regex(PARAMETER_TYPE, {
            error:
              "must be a Spark type: STRING, INT, BIGINT, DOUBLE, BOOLEAN, DATE, TIMESTAMP, DECIMAL(p,s), …",
          })
          .optional(),
      }),
    )
    .optional(),
  row_limit: z.number().int().positive().max(10_000).optional(),
  byte_limit: z.number().int().positive().optional(),
  /** Databricks' `Ns`: 0, or 5 to 50 seconds. */
  wait_timeout: z
    .string()
    .regex(/^(0|[5-9]|[1-4][0-9]|50)s$/, { error: "must be 0s or 5s to 50s" })
    .optional(),
  on_wait_timeout: caseInsensitiveEnum(["CONTINUE", "CANCEL"], (v) => v.toUpperCase()).optional(),
  disposition: z
    .literal("INLINE", { error: "only INLINE: Ebb answers results inline (EXTERNAL_LINKS is not supported)" })
    .optional(),
  format: z
    .literal("JSON_ARRAY", {
      error: "only JSON_ARRAY: Ebb answers results as JSON arrays (ARROW_STREAM and CSV are not supported)",
    })
    .optional(),
  query_tags: z.array(strictObject({ key: z.string(), value: z.string().nullable().optional() })).optional(),
});

/** `DELETE /api/2.0/pipelines/{id}`. */
export const deletePipelineQuery = strictObject({ purge: queryBoolean.optional() });

const paging = {
  max_results: maxResults.optional(),
  page_token: queryText().min(1).optional(),
};

/** `GET /api/2.0/pipelines`: `filter` is `name LIKE '<pattern>'` (pipeline-filter.ts). */
export const listPipelinesQuery = strictObject({ ...paging, filter: queryText().optional() });

/** `GET /api/2.0/pipelines/{id}/updates`. */
export const listUpdatesQuery = strictObject(paging);

/** `GET /api/2.0/pipelines/{id}/rewind-points`. */
export const listRewindPointsQuery = strictObject(paging);

/** `GET /api/2.0/pipelines/{id}/branches`. */
export const listBranchesQuery = strictObject(paging);

/** `GET /api/2.0/pipelines/{id}/branches/{name}/diff`. */
export const branchDiffQuery = strictObject({ max_samples: queryInt(0).pipe(z.number().max(50)).optional() });

/** `GET /api/2.0/pipelines/{id}/events`. */
export const listEventsQuery = strictObject({
  ...paging,
  filter: queryText().optional(),
  order_by: z.union([z.string(), z.array(z.string())]).optional(),
});

/** `GET /api/2.0/tables/{full_name}/changes`. */
export const tableChangesQuery = strictObject({
  starting_version: queryInt(0).default(0),
  ending_version: queryInt(0).optional(),
  ...paging,
});

/**
 * `GET /api/2.0/pipelines/{id}/flows/{flow_name}/state`: at HEAD (neither), at a committed checkpoint,
 * or at a rewind point (what a rewind to it restores).
 */
export const flowStateQuery = strictObject({
  checkpoint_seq: queryInt(0).optional(),
  rewind_point_id: queryText().min(1).max(200).optional(),
  ...paging,
});

/** Routes that take no query parameters. */
export const noQuery = strictObject({});

export type CreatePipelineBody = z.infer<typeof createPipelineBody>;
export type EditPipelineBody = z.infer<typeof editPipelineBody>;
/** The settings both create and edit take. */
export type PipelineSettingsBody = CreatePipelineBody | EditPipelineBody;
export type StartUpdateBody = z.infer<typeof startUpdateBody>;
export type CutRewindBody = z.infer<typeof cutRewindBody>;
export type OrderedRunBody = z.infer<typeof orderedRunBody>;
export type QueryTableBody = z.infer<typeof queryTableBody>;
export type OnsetBody = z.infer<typeof onsetBody>;
export type ExecuteStatementBody = z.infer<typeof executeStatementBody>;
export type VacuumTableBody = z.infer<typeof vacuumTableBody>;
export type OptimizeTableBody = z.infer<typeof optimizeTableBody>;
export type ListEventsQuery = z.infer<typeof listEventsQuery>;
export type TableChangesQuery = z.infer<typeof tableChangesQuery>;
export type FlowStateQuery = z.infer<typeof flowStateQuery>;
