import type { OnsetAnswer } from "../api/onset-answer.ts";
import type { RequestAuth } from "./request-auth.ts";
import { withRetries } from "./request-retry.ts";

/**
 * A small typed client of Ebb's HTTP API (api.md), used by the CLI, the demo, the benchmarks and the
 * tests. Every error answer becomes an `EbbApiError` with the API's `error_code`; a throttled
 * request, or a read whose connection dropped, is sent again (request-retry.ts).
 */

export class EbbApiError extends Error {
  override readonly name = "EbbApiError";
  constructor(
    readonly status: number,
    readonly errorCode: string,
    message: string,
  ) {
    super(message);
  }
}

export type UpdateState =
  | "QUEUED"
  | "CREATED"
  | "WAITING_FOR_RESOURCES"
  | "INITIALIZING"
  | "RESETTING"
  | "SETTING_UP_TABLES"
  | "RUNNING"
  | "STOPPING"
  | "COMPLETED"
  | "FAILED"
  | "CANCELED";

export const TERMINAL_STATES: readonly UpdateState[] = ["COMPLETED", "FAILED", "CANCELED"];

export interface FlowProgress {
  readonly dataset?: string;
  readonly batches: number;
  readonly rows_in: number;
  readonly rows_out: number;
  readonly status: string;
  /** A materialized view's latest refresh: `INCREMENTAL` or `FULL_RECOMPUTE` (rows_out: the rows it wrote). */
  readonly refresh?: string;
  /**
   * A stateful flow: its state after the latest batch, what this update's batches dropped, emitted
   * and joined, the watermark. Fields a server of an earlier version does not send are optional.
   */
  readonly state?: {
    /** Spark's `operatorName`s: `dedupe`, `dedupeWithinWatermark`, `stateStoreSave`, `symmetricHashJoin`. */
    readonly operator_names?: readonly string[];
    readonly num_rows_total: number;
    readonly state_bytes: number;
    readonly num_rows_dropped_by_watermark: number;
    readonly num_duplicates_dropped: number;
    readonly num_windows_emitted?: number;
    readonly num_joined_rows?: number;
    readonly num_left_outer_rows?: number;
    readonly watermark: string | null;
  };
}

export interface UpdateInfo {
  readonly update_id: string;
  readonly pipeline_id: string;
  readonly state: UpdateState;
  readonly cause: string;
  readonly creation_time: number;
  readonly definition_version: number;
  readonly rewind_spec?: unknown;
  /** The run's place in an ordered run of several pipelines (POST /api/2.0/ebb/runs). */
  readonly ordered_run?: { readonly request_id: string; readonly position: number; readonly of: number };
  readonly error?: { readonly error_code: string; readonly message: string };
  readonly progress?: Readonly<Record<string, FlowProgress>>;
  readonly [field: string]: unknown;
}

export interface RewindPointInfo {
  readonly rewind_point_id: string;
  readonly timestamp: string;
  readonly message: string;
  /** Why it was recorded; a `dry-run` point is a dry run's record of its target. */
  readonly kind?: "periodic" | "update-end" | "dry-run";
  readonly datasets: readonly { readonly identifier: string; readonly table_version: number }[];
  readonly flows: readonly { readonly flow: string; readonly checkpoint_seq: number }[];
  /** False once the point's table data is gone (a VACUUM outside Ebb); the reason says what. */
  readonly restorable?: boolean;
  readonly not_restorable_reason?: string;
}

export interface EventInfo {
  readonly id: string;
  readonly timestamp: string;
  readonly level: string;
  readonly event_type: string;
  readonly message: string;
  readonly origin: Readonly<Record<string, unknown>>;
  readonly details: Readonly<Record<string, unknown>>;
}

type Query = Readonly<Record<string, string | number | boolean | undefined>>;

/** One dataset of `GET …/datasets`: its table's version and rows now, its flows and what it reads. */
export interface DatasetInfo {
  readonly name: string;
  readonly identifier: string;
  readonly type: string;
  /** Null (or absent) before the table's first commit. */
  readonly version?: number | null;
  readonly row_count?: number | null;
  readonly last_commit_time?: string | null;
  readonly flows: readonly string[];
  readonly upstreams: readonly string[];
}

/** A flow's operator state at one checkpoint (`GET …/flows/{flow}/state`). */
export interface FlowStateInfo {
  readonly pipeline_id: string;
  readonly flow: string;
  readonly checkpoint_seq: number;
  readonly rewind_point_id?: string;
  /** The state version's key; null for the empty state. */
  readonly state_version: string | null;
  readonly watermark: string | null;
  readonly tables: readonly {
    readonly name: string;
    readonly key_columns: readonly { name: string; type: string }[];
    readonly value_columns: readonly { name: string; type: string }[];
    readonly num_rows: number;
  }[];
  readonly rows: readonly {
    readonly table: string;
    readonly key: Record<string, unknown>;
    readonly value: Record<string, unknown>;
  }[];
  readonly next_page_token?: string;
}

/** A setting Ebb accepted but does not act on (a Databricks cluster's, say), and why. */
export interface IgnoredSetting {
  readonly field: string;
  readonly reason: string;
}

export interface EbbClientOptions {
  /** `http://127.0.0.1:<port>` locally, the API URL (with its stage) on AWS. */
  readonly endpoint: string;
  readonly auth: RequestAuth;
}

export class EbbClient {
  readonly #base: string;
  readonly #auth: RequestAuth;

  constructor(options: EbbClientOptions) {
    this.#base = options.endpoint.replace(/\/+$/, "");
    this.#auth = options.auth;
  }

  async request<T>(
    method: string,
    path: string,
    options: { query?: Query; body?: unknown } = {},
  ): Promise<T> {
    const url = new URL(this.#base + path);
    for (const [name, value] of Object.entries(options.query ?? {})) {
      if (value !== undefined) url.searchParams.set(name, String(value));
    }
    const body = options.body === undefined ? undefined : JSON.stringify(options.body);
    const headers = {
      ...(body !== undefined ? { "content-type": "application/json" } : {}),
      ...(await this.#auth.headers({ method, url, body })),
    };
    const response = await withRetries(method, () =>
      fetch(url, { method, headers, ...(body !== undefined ? { body } : {}) }),
    );
    const text = await response.text();
    let parsed: unknown;
    try {
      parsed = text === "" ? {} : JSON.parse(text);
    } catch {
      parsed = { error_code: "MALFORMED_RESPONSE", message: text.slice(0, 200) };
    }
    if (!response.ok) {
      const error = parsed as { error_code?: string; message?: string; Message?: string };
      throw new EbbApiError(
        response.status,
        error.error_code ?? `HTTP_${response.status}`,
        error.message ?? error.Message ?? text.slice(0, 200),
      );
    }
    return parsed as T;
  }

  // Pipelines
  createPipeline(body: unknown) {
    return this.request<{ pipeline_id: string; ignored_settings?: IgnoredSetting[] }>(
      "POST",
      "/api/2.0/pipelines",
      { body },
    );
  }
  /** Every pipeline, newest first; with `max_results`, one page of them. */
  listPipelines(query: { max_results?: number; page_token?: string } = {}) {
    return this.request<{
      statuses: {
        pipeline_id: string;
        name: string;
        state: string;
        definition_version: number;
        latest_updates?: { update_id: string; state: string; creation_time: number }[];
      }[];
      next_page_token?: string;
    }>("GET", "/api/2.0/pipelines", { query });
  }
  getPipeline(pipelineId: string) {
    return this.request<Record<string, unknown>>("GET", `/api/2.0/pipelines/${pipelineId}`);
  }
  editPipeline(pipelineId: string, body: unknown) {
    return this.request<{ definition_version: number; ignored_settings?: IgnoredSetting[] }>(
      "PUT",
      `/api/2.0/pipelines/${pipelineId}`,
      { body },
    );
  }
  deletePipeline(pipelineId: string, purge = false) {
    return this.request<object>("DELETE", `/api/2.0/pipelines/${pipelineId}`, {
      query: purge ? { purge } : {},
    });
  }
  stopPipeline(pipelineId: string) {
    return this.request<object>("POST", `/api/2.0/pipelines/${pipelineId}/stop`, { body: {} });
  }

  // Updates
  startUpdate(pipelineId: string, body: unknown = {}) {
    return this.request<{ update_id: string }>("POST", `/api/2.0/pipelines/${pipelineId}/updates`, { body });
  }
  getUpdate(pipelineId: string, updateId: string) {
    return this.request<{ update: UpdateInfo }>(
      "GET",
      `/api/2.0/pipelines/${pipelineId}/updates/${updateId}`,
    );
  }
  listUpdates(pipelineId: string, query: { max_results?: number; page_token?: string } = {}) {
    return this.request<{ updates: UpdateInfo[]; next_page_token?: string; prev_page_token?: string }>(
      "GET",
      `/api/2.0/pipelines/${pipelineId}/updates`,
      { query },
    );
  }

  /** Polls get-update until the update reaches a terminal state. */
  async waitForUpdate(
    pipelineId: string,
    updateId: string,
    options: { intervalMs?: number; timeoutMs?: number; onPoll?: (update: UpdateInfo) => void } = {},
  ): Promise<UpdateInfo> {
    const deadline = Date.now() + (options.timeoutMs ?? 15 * 60_000);
    for (;;) {
      const { update } = await this.getUpdate(pipelineId, updateId);
      options.onPoll?.(update);
      if (TERMINAL_STATES.includes(update.state)) return update;
      if (Date.now() > deadline)
        throw new Error(`update ${updateId} is still ${update.state} after the timeout`);
      await new Promise((resolve) => setTimeout(resolve, options.intervalMs ?? 500));
    }
  }

  // Event log, datasets, rewind points
  events(
    pipelineId: string,
    query: { filter?: string; order_by?: string; max_results?: number; page_token?: string } = {},
  ) {
    return this.request<{ events: EventInfo[]; next_page_token?: string; prev_page_token?: string }>(
      "GET",
      `/api/2.0/pipelines/${pipelineId}/events`,
      { query },
    );
  }
  datasets(pipelineId: string) {
    return this.request<{ datasets: DatasetInfo[] }>("GET", `/api/2.0/pipelines/${pipelineId}/datasets`);
  }
  rewindPoints(pipelineId: string) {
    return this.request<{ rewind_points: RewindPointInfo[] }>(
      "GET",
      `/api/2.0/pipelines/${pipelineId}/rewind-points`,
    );
  }
  captureRewindPoint(pipelineId: string) {
    return this.request<RewindPointInfo>("POST", `/api/2.0/pipelines/${pipelineId}/rewind-points`, {
      body: {},
    });
  }

  /** A flow's operator state at HEAD, a checkpoint or a rewind point (one page). */
  flowState(
    pipelineId: string,
    flow: string,
    query: {
      checkpoint_seq?: number;
      rewind_point_id?: string;
      max_results?: number;
      page_token?: string;
    } = {},
  ) {
    return this.request<FlowStateInfo>("GET", `/api/2.0/pipelines/${pipelineId}/flows/${flow}/state`, {
      query,
    });
  }

  // Tables
  history(table: string) {
    return this.request<{ history: Record<string, unknown>[] }>("GET", `/api/2.0/tables/${table}/history`);
  }
  changes(
    table: string,
    query: {
      starting_version?: number;
      ending_version?: number;
      max_results?: number;
      page_token?: string;
    } = {},
  ) {
    return this.request<{ changes: Record<string, unknown>[]; next_page_token?: string }>(
      "GET",
      `/api/2.0/tables/${table}/changes`,
      { query },
    );
  }
  query(table: string, body: { sql?: string; version?: number; timestamp?: string; limit?: number } = {}) {
    return this.request<{
      version: number;
      timestamp: string;
      rows: Record<string, unknown>[];
      truncated: boolean;
    }>("POST", `/api/2.0/tables/${table}/query`, { body });
  }
  vacuum(
    table: string,
    body: { retain_hours?: number; allow_short_retention?: boolean; dry_run?: boolean } = {},
  ) {
    return this.request<{
      table: string;
      pipeline_id?: string;
      dry_run: boolean;
      retention_hours: number;
      protected_versions: number[];
      files_protected: number;
      files_within_retention: number;
      files: { path: string; size: number }[];
      /** Bucket keys of the state files of the table's flows that no live point needs. */
      state_files: string[];
      /** Set for a table no pipeline owns: nothing but the retention protected its files. */
      notice?: string;
    }>("POST", `/api/2.0/tables/${table}/vacuum`, { body });
  }
  onset(table: string, body: { predicate: string; change_types?: string[]; starting_version?: number }) {
    return this.request<OnsetResult>("POST", `/api/2.0/tables/${table}/onset`, { body });
  }

  /** OPTIMIZE: bin-packing compaction of the table's small files. */
  optimize(table: string, body: { target_file_size_bytes?: number; dry_run?: boolean } = {}) {
    return this.request<OptimizeResult>("POST", `/api/2.0/tables/${table}/optimize`, { body });
  }

  /** A Databricks SQL query (the Statement Execution API's shape). */
  executeStatement(body: {
    statement: string;
    warehouse_id?: string;
    catalog?: string;
    schema?: string;
    row_limit?: number;
    parameters?: { name: string; value?: string | null; type?: string }[];
  }) {
    return this.request<StatementResponse>("POST", "/api/2.0/sql/statements", { body });
  }
}

/** What `POST /api/2.0/tables/{name}/onset` answers. */
export type OnsetResult = OnsetAnswer<RewindPointInfo>;

/** What `POST /api/2.0/tables/{name}/optimize` answers (`version` only when it committed). */
export interface OptimizeResult {
  readonly read_version: number;
  readonly dry_run: boolean;
  readonly target_file_size_bytes: number;
  readonly version?: number;
  readonly metrics: {
    readonly num_bins: number;
    readonly num_files_removed: number;
    readonly num_bytes_removed: number;
    readonly num_files_skipped: number;
    readonly num_files_added?: number;
    readonly num_bytes_added?: number;
  };
}

/** `POST /api/2.0/sql/statements`'s answer: Databricks' `StatementResponse` (JSON_ARRAY, inline). */
export interface StatementResponse {
  readonly statement_id: string;
  readonly status: {
    readonly state: "SUCCEEDED" | "FAILED";
    readonly error?: { readonly error_code: string; readonly message: string };
  };
  readonly manifest?: {
    readonly schema: { readonly columns: readonly { name: string; type_name: string; type_text: string }[] };
    readonly total_row_count: number;
    readonly truncated: boolean;
  };
  readonly result?: { readonly data_array: (string | null)[][] };
  readonly notices?: readonly string[];
}
