import type { z } from "zod";
import type * as answers from "../api/response-schemas.ts";
import type { RequestAuth } from "./request-auth.ts";
import { EndpointUnreachableError } from "./endpoint-unreachable-error.ts";
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

/**
 * What a route answers on success: its response schema's type (response-schemas.ts, which the route
 * contracts name), the one source of the API's answers.
 */
type Answer<Schema extends z.ZodType> = z.infer<Schema>;

export type {
  DatasetInfo,
  DatasetSpec,
  EventInfo,
  FlowProgress,
  FlowStateInfo,
  PipelineDetail,
  PipelineStatus,
  RewindPointInfo,
  StatementResponse,
  UpdateInfo,
} from "../api/response-schemas.ts";
import type { UpdateInfo } from "../api/response-schemas.ts";
/** A setting Ebb accepted but does not act on (a Databricks cluster's, say), and why. */
export type IgnoredSetting = NonNullable<
  Answer<typeof answers.editPipelineResponse>["ignored_settings"]
>[number];
/** An edit's answer: its definition version, the settings ignored and its `warnings`. */
export type EditResult = Answer<typeof answers.editPipelineResponse>;
export type CutRewindResult = Answer<typeof answers.rewindToCutResponse>;
export type OrderedRunResult = Answer<typeof answers.orderedRunResponse>;
export type OnsetResult = Answer<typeof answers.findOnsetResponse>;
export type OptimizeResult = Answer<typeof answers.optimizeTableResponse>;
export type VacuumResult = Answer<typeof answers.vacuumTableResponse>;
export type BranchInfo = Answer<typeof answers.getBranchResponse>["branch"];
export type BranchDiff = Answer<typeof answers.branchDiffResponse>;
export type PublishedBranch = Answer<typeof answers.publishBranchResponse>;

export type UpdateState = UpdateInfo["state"];

/** `POST /api/2.0/pipelines` without `dry_run`: the new pipeline's id. */
export type CreatedPipeline = Extract<Answer<typeof answers.createPipelineResponse>, { pipeline_id: string }>;

export const TERMINAL_STATES: readonly UpdateState[] = ["COMPLETED", "FAILED", "CANCELED"];

type Query = Readonly<Record<string, string | number | boolean | undefined>>;

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
    let response: Response;
    try {
      response = await withRetries(method, () =>
        fetch(url, { method, headers, ...(body !== undefined ? { body } : {}) }),
      );
    } catch (error) {
      // fetch rejects only when nothing answered (refused, unresolvable, dropped): not an API error.
      throw new EndpointUnreachableError(this.#base, method, error);
    }
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
    return this.request<CreatedPipeline>("POST", "/api/2.0/pipelines", { body });
  }
  /** Every pipeline, newest first; with `max_results`, one page of them. */
  listPipelines(query: { max_results?: number; page_token?: string; filter?: string } = {}) {
    return this.request<Answer<typeof answers.listPipelinesResponse>>("GET", "/api/2.0/pipelines", { query });
  }
  getPipeline(pipelineId: string) {
    return this.request<Answer<typeof answers.getPipelineResponse>>(
      "GET",
      `/api/2.0/pipelines/${pipelineId}`,
    );
  }
  editPipeline(pipelineId: string, body: unknown) {
    return this.request<Answer<typeof answers.editPipelineResponse>>(
      "PUT",
      `/api/2.0/pipelines/${pipelineId}`,
      { body },
    );
  }
  deletePipeline(pipelineId: string, purge = false) {
    return this.request<Answer<typeof answers.emptyResponse>>("DELETE", `/api/2.0/pipelines/${pipelineId}`, {
      query: purge ? { purge } : {},
    });
  }
  stopPipeline(pipelineId: string) {
    return this.request<Answer<typeof answers.emptyResponse>>(
      "POST",
      `/api/2.0/pipelines/${pipelineId}/stop`,
      {
        body: {},
      },
    );
  }

  // Updates
  startUpdate(pipelineId: string, body: unknown = {}) {
    return this.request<Answer<typeof answers.startUpdateResponse>>(
      "POST",
      `/api/2.0/pipelines/${pipelineId}/updates`,
      {
        body,
      },
    );
  }
  getUpdate(pipelineId: string, updateId: string) {
    return this.request<Answer<typeof answers.getUpdateResponse>>(
      "GET",
      `/api/2.0/pipelines/${pipelineId}/updates/${updateId}`,
    );
  }
  listUpdates(pipelineId: string, query: { max_results?: number; page_token?: string } = {}) {
    return this.request<Answer<typeof answers.listUpdatesResponse>>(
      "GET",
      `/api/2.0/pipelines/${pipelineId}/updates`,
      {
        query,
      },
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
    return this.request<Answer<typeof answers.listEventsResponse>>(
      "GET",
      `/api/2.0/pipelines/${pipelineId}/events`,
      {
        query,
      },
    );
  }
  datasets(pipelineId: string) {
    return this.request<Answer<typeof answers.listDatasetsResponse>>(
      "GET",
      `/api/2.0/pipelines/${pipelineId}/datasets`,
    );
  }
  // Branches (docs/branches.md)
  /** A branch at a rewind point: `rewindSpec` as a rewind's (rewind_point_id or rewind_timestamp, datasets). */
  createBranch(pipelineId: string, name: string, rewindSpec: Readonly<Record<string, unknown>>) {
    return this.request<Answer<typeof answers.createBranchResponse>>(
      "POST",
      `/api/2.0/pipelines/${pipelineId}/updates`,
      { body: { rewind_spec: { ...rewindSpec, branch: name } } },
    );
  }
  branches(pipelineId: string, page: { maxResults?: number; pageToken?: string } = {}) {
    return this.request<Answer<typeof answers.listBranchesResponse>>(
      "GET",
      `/api/2.0/pipelines/${pipelineId}/branches`,
      {
        query: {
          ...(page.maxResults !== undefined ? { max_results: String(page.maxResults) } : {}),
          ...(page.pageToken !== undefined ? { page_token: page.pageToken } : {}),
        },
      },
    );
  }
  branch(pipelineId: string, name: string) {
    return this.request<Answer<typeof answers.getBranchResponse>>(
      "GET",
      `/api/2.0/pipelines/${pipelineId}/branches/${encodeURIComponent(name)}`,
    );
  }
  branchDiff(pipelineId: string, name: string, options: { maxSamples?: number } = {}) {
    return this.request<Answer<typeof answers.branchDiffResponse>>(
      "GET",
      `/api/2.0/pipelines/${pipelineId}/branches/${encodeURIComponent(name)}/diff`,
      { query: options.maxSamples !== undefined ? { max_samples: String(options.maxSamples) } : {} },
    );
  }
  publishBranch(pipelineId: string, name: string) {
    return this.request<Answer<typeof answers.publishBranchResponse>>(
      "POST",
      `/api/2.0/pipelines/${pipelineId}/branches/${encodeURIComponent(name)}/publish`,
      { body: {} },
    );
  }
  discardBranch(pipelineId: string, name: string) {
    return this.request<Answer<typeof answers.emptyResponse>>(
      "POST",
      `/api/2.0/pipelines/${pipelineId}/branches/${encodeURIComponent(name)}/discard`,
      { body: {} },
    );
  }
  /** One page of the live rewind points, newest first. */
  rewindPoints(pipelineId: string, query: { max_results?: number; page_token?: string } = {}) {
    return this.request<Answer<typeof answers.listRewindPointsResponse>>(
      "GET",
      `/api/2.0/pipelines/${pipelineId}/rewind-points`,
      { query },
    );
  }
  /** Every live rewind point, newest first: the pages followed to the last. */
  async allRewindPoints(pipelineId: string) {
    const points: Answer<typeof answers.listRewindPointsResponse>["rewind_points"] = [];
    let page_token: string | undefined;
    do {
      const page = await this.rewindPoints(pipelineId, {
        max_results: 1000,
        ...(page_token !== undefined ? { page_token } : {}),
      });
      points.push(...page.rewind_points);
      page_token = page.next_page_token;
    } while (page_token);
    return points;
  }
  /** Several pipelines to one cut (docs/rewind-across-pipelines.md); `dry_run`: the plan only. */
  rewindToCut(body: {
    pipeline_ids: readonly string[];
    rewind_point_id?: string;
    rewind_timestamp?: string;
    dry_run?: boolean;
  }) {
    return this.request<Answer<typeof answers.rewindToCutResponse>>("POST", "/api/2.0/ebb/rewinds", { body });
  }
  /** Several pipelines run one after another, upstreams first; `dry_run`: the order only. */
  startOrderedRun(body: { pipeline_ids: readonly string[]; full_refresh?: boolean; dry_run?: boolean }) {
    return this.request<Answer<typeof answers.orderedRunResponse>>("POST", "/api/2.0/ebb/runs", { body });
  }
  captureRewindPoint(pipelineId: string) {
    return this.request<Answer<typeof answers.rewindPointResponse>>(
      "POST",
      `/api/2.0/pipelines/${pipelineId}/rewind-points`,
      {
        body: {},
      },
    );
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
    return this.request<Answer<typeof answers.flowStateInfo>>(
      "GET",
      `/api/2.0/pipelines/${pipelineId}/flows/${flow}/state`,
      {
        query,
      },
    );
  }

  // Tables
  history(table: string) {
    return this.request<Answer<typeof answers.tableHistoryResponse>>(
      "GET",
      `/api/2.0/tables/${table}/history`,
    );
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
    return this.request<Answer<typeof answers.tableChangesResponse>>(
      "GET",
      `/api/2.0/tables/${table}/changes`,
      {
        query,
      },
    );
  }
  query(table: string, body: { sql?: string; version?: number; timestamp?: string; limit?: number } = {}) {
    return this.request<Answer<typeof answers.queryTableResponse>>("POST", `/api/2.0/tables/${table}/query`, {
      body,
    });
  }
  vacuum(
    table: string,
    body: { retain_hours?: number; allow_short_retention?: boolean; dry_run?: boolean } = {},
  ) {
    return this.request<VacuumResult>("POST", `/api/2.0/tables/${table}/vacuum`, { body });
  }
  onset(table: string, body: { predicate: string; change_types?: string[]; starting_version?: number }) {
    return this.request<Answer<typeof answers.findOnsetResponse>>("POST", `/api/2.0/tables/${table}/onset`, {
      body,
    });
  }

  /** OPTIMIZE: bin-packing compaction of the table's small files. */
  optimize(table: string, body: { target_file_size_bytes?: number; dry_run?: boolean } = {}) {
    return this.request<Answer<typeof answers.optimizeTableResponse>>(
      "POST",
      `/api/2.0/tables/${table}/optimize`,
      { body },
    );
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
    return this.request<Answer<typeof answers.statementResponse>>("POST", "/api/2.0/sql/statements", {
      body,
    });
  }
}
