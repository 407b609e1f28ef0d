import { CodedError } from "../errors/coded-error.ts";

/**
 * Errors of the rewind module (semantics.md "Rewind request", "Doing the rewind", "Refresh and
 * reset"): one base class, a subclass per API `error_code`. Each sets `name` (Step Functions Catch
 * matches on it), the `error_code` and HTTP status the API answers with, structured `data`, and a
 * message that says what went wrong and what to do. Every one of them is raised before anything is
 * changed, except `RewindIncompleteError` and `RefreshIncompleteError`, which report an earlier failure.
 */
export class RewindError extends CodedError {
  override readonly name: string = "RewindError";
  /** 400 for a bad request, 409 where the pipeline's state forbids it. */
  override readonly httpStatus: 400 | 409 = 400;
}

const SPEC = "INVALID_REWIND_SPECIFICATION";

/** Both `rewind_point_id` and `rewind_timestamp` were given. */
export class MultipleRewindTargetsError extends RewindError {
  override readonly name = "MultipleRewindTargetsError";
  override readonly errorCode = `${SPEC}.MULTIPLE_REWIND_TARGETS`;
  constructor() {
    super(
      "rewind_spec sets both rewind_point_id and rewind_timestamp: set exactly one (a point id to restore a captured point, or a timestamp to restore the state at that time)",
    );
  }
}

/** Neither `rewind_point_id` nor `rewind_timestamp` was given. */
export class MissingRewindTargetError extends RewindError {
  override readonly name = "MissingRewindTargetError";
  override readonly errorCode = `${SPEC}.MISSING_REWIND_TARGET`;
  constructor() {
    super(
      'rewind_spec sets neither rewind_point_id nor rewind_timestamp: set exactly one (list points with GET /api/2.0/pipelines/{id}/rewind-points, or give a UTC time as "yyyy-MM-dd HH:mm:ss")',
    );
  }
}

/** The id is not a live `rewind_summary` event of this pipeline. */
export class RewindPointNotFoundError extends RewindError {
  override readonly name = "RewindPointNotFoundError";
  override readonly errorCode = `${SPEC}.REWIND_POINT_NOT_FOUND`;
  constructor(readonly rewindPointId: string) {
    super(
      `rewind point ${JSON.stringify(rewindPointId)} is not a live rewind point of this pipeline (unknown, another pipeline's, or expired after its retention): list the live points with GET /api/2.0/pipelines/{id}/rewind-points and pick one, or rewind by rewind_timestamp`,
      { data: { rewindPointId } },
    );
  }
}

/** A timestamp in no accepted form, or in the future. */
export class InvalidRewindTimestampError extends RewindError {
  override readonly name = "InvalidRewindTimestampError";
  override readonly errorCode = `${SPEC}.INVALID_TIMESTAMP`;
  constructor(
    readonly timestamp: string,
    reason: "format" | "future",
  ) {
    super(
      reason === "future"
        ? `rewind_timestamp ${JSON.stringify(timestamp)} is in the future: a rewind goes back to a time that has passed; give a UTC time before now`
        : `rewind_timestamp ${JSON.stringify(timestamp)} is not a UTC timestamp: write it as "yyyy-MM-dd HH:mm:ss" (UTC) or ISO-8601 with T and Z, e.g. "2026-09-29 08:36:55" or "2026-09-29T08:36:55Z"`,
      { data: { timestamp, reason } },
    );
  }
}

/** What a rewind needs and no longer exists: a version, files, checkpoints, state or source data. */
export interface MissingPiece {
  /** The dataset or flow it belongs to. */
  readonly owner: string;
  readonly what: string;
}

function describeMissing(missing: readonly MissingPiece[]): string {
  const shown = missing.slice(0, 10).map((piece) => `${piece.owner}: ${piece.what}`);
  return shown.join("; ") + (missing.length > 10 ? `; and ${missing.length - 10} more` : "");
}

/** The target is older than the rewind retention, or table history, files or source data it needs are gone. */
export class BeyondRetentionError extends RewindError {
  override readonly name = "BeyondRetentionError";
  override readonly errorCode = `${SPEC}.BEYOND_RETENTION`;
  constructor(
    readonly missing: readonly MissingPiece[],
    detail?: string,
  ) {
    super(
      `the rewind target is beyond retention: ${detail ?? describeMissing(missing)}; pick a later rewind point or timestamp (VACUUM, delta.deletedFileRetentionDuration and source retention bound how far back a rewind can go)`,
      { data: { missing } },
    );
  }
}

/** A checkpoint or operator/source state file the target needs is gone. */
export class CheckpointBeyondRetentionError extends RewindError {
  override readonly name = "CheckpointBeyondRetentionError";
  override readonly errorCode = `${SPEC}.CHECKPOINT_BEYOND_RETENTION`;
  constructor(readonly missing: readonly MissingPiece[]) {
    super(
      `the checkpoints of the rewind target are beyond retention: ${describeMissing(missing)}; pick a later rewind point, or rewind with reset_checkpoints: false (table data only) where the flow does not read an external source`,
      { data: { missing } },
    );
  }
}

/** `datasets[].identifier` names no dataset of this pipeline. */
export class RewindDatasetNotFoundError extends RewindError {
  override readonly name = "RewindDatasetNotFoundError";
  override readonly errorCode = `${SPEC}.DATASET_NOT_FOUND`;
  constructor(
    readonly identifiers: readonly string[],
    readonly known: readonly string[],
  ) {
    super(
      `rewind_spec.datasets names ${identifiers.map((i) => JSON.stringify(i)).join(", ")}, which ${identifiers.length === 1 ? "is" : "are"} not a dataset of this pipeline: use catalog.schema.table of one of ${known.join(", ") || "(none)"}`,
      { data: { identifiers, known } },
    );
  }
}

/**
 * A streaming table with no table version at the target, to rewind with reset_checkpoints: false:
 * emptied while its flows keep their positions, it would never get back what it held.
 */
export class DatasetNotInRewindPointError extends RewindError {
  override readonly name = "DatasetNotInRewindPointError";
  override readonly errorCode = `${SPEC}.DATASET_NOT_IN_REWIND_POINT`;
  constructor(readonly datasets: readonly string[]) {
    const them = datasets.length === 1 ? "it" : "them";
    super(
      `${datasets.join(", ")} did not exist at the rewind target, so the rewind empties ${them}, but rewind_spec asks to keep ${datasets.length === 1 ? "its flows'" : "their flows'"} checkpoints (reset_checkpoints: false), and ${them} would never get back what ${datasets.length === 1 ? "it holds" : "they hold"}: set reset_checkpoints: true on ${them} (${datasets.length === 1 ? "its" : "their"} flows then read their sources from the start on replay)`,
      { data: { datasets } },
    );
  }
}

/** A `rewind_spec.datasets` entry, as a fix suggests it. */
export interface SuggestedDatasetSpec {
  readonly identifier: string;
  readonly cascade: boolean;
  readonly reset_checkpoints: boolean;
}

/** The way out a cascade refusal names: the whole `datasets` list that passes every cascade rule. */
function sendInstead(working: readonly SuggestedDatasetSpec[] | undefined, fallback: string): string {
  return working
    ? `send rewind_spec.datasets = ${JSON.stringify(working)} (or rewind every dataset: leave datasets out)`
    : fallback;
}

/** A rewound dataset's reader is left out although it consumed past the target. */
export class InvalidCascadeConfigurationError extends RewindError {
  override readonly name = "InvalidCascadeConfigurationError";
  override readonly errorCode = `${SPEC}.INVALID_CASCADE_CONFIGURATION`;
  constructor(
    readonly conflicts: readonly {
      readonly reader: string;
      readonly upstream: string;
      /** The reader is rewound, but with reset_checkpoints: false. */
      readonly keepsCheckpoint?: boolean;
    }[],
    /** A `datasets` list that passes the cascade rules, when one was found. */
    readonly working?: readonly SuggestedDatasetSpec[],
  ) {
    const left = conflicts.filter((c) => !c.keepsCheckpoint);
    const kept = conflicts.filter((c) => c.keepsCheckpoint);
    const list = (items: typeof conflicts) =>
      items.map((c) => `${c.reader} (reads ${c.upstream})`).join(", ");
    const parts = [
      ...(left.length > 0 ? [`the rewind leaves out ${list(left)}`] : []),
      ...(kept.length > 0
        ? [
            `the rewind keeps the checkpoints of ${list(kept)} (reset_checkpoints: false, which suits only datasets whose streaming readers have not read past the target)`,
          ]
        : []),
    ];
    const readers = [...new Set(conflicts.map((c) => c.reader))];
    super(
      `${parts.join(", and ")}, which already consumed data past the rewind target and would fail on replay: ${sendInstead(
        working,
        `rewind ${readers.join(", ")} too, with reset_checkpoints: true, and reset_checkpoints: true on ${readers.length === 1 ? "its" : "their"} upstreams in the rewind`,
      )}`,
      { data: { conflicts, ...(working ? { working } : {}) } },
    );
  }
}

/** `reset_checkpoints` differs between a dataset and one of its upstreams in the rewound set. */
export class InconsistentUpstreamCheckpointResetError extends RewindError {
  override readonly name = "InconsistentUpstreamCheckpointResetError";
  override readonly errorCode = `${SPEC}.INCONSISTENT_UPSTREAM_CHECKPOINT_RESET`;
  constructor(
    readonly pairs: readonly { readonly dataset: string; readonly upstream: string }[],
    /** A `datasets` list that passes the cascade rules, when one was found. */
    readonly working?: readonly SuggestedDatasetSpec[],
  ) {
    super(
      `reset_checkpoints must be the same for a dataset and its upstreams in the rewind, but differs for ${pairs
        .map((p) => `${p.dataset} and its upstream ${p.upstream}`)
        .join(", ")}: ${sendInstead(working, "set reset_checkpoints: true on both")}`,
      { data: { pairs, ...(working ? { working } : {}) } },
    );
  }
}

/** `reset_checkpoints: false` on a dataset whose flow reads an external source. */
export class ResetCheckpointsRequiredError extends RewindError {
  override readonly name = "ResetCheckpointsRequiredError";
  override readonly errorCode = `${SPEC}.RESET_CHECKPOINTS_REQUIRED`;
  constructor(
    readonly flows: readonly { readonly dataset: string; readonly flow: string; readonly source: string }[],
  ) {
    super(
      `reset_checkpoints: false is not allowed for ${flows
        .map((f) => `${f.dataset} (flow ${f.flow} reads ${f.source})`)
        .join(
          ", ",
        )}: an external source cannot be rewound without its offsets, or replay would skip or repeat records; set reset_checkpoints: true`,
      { data: { flows } },
    );
  }
}

/** The target lies before the last full refresh (or reset) of a dataset to rewind. */
export class RewindBeforeFullRefreshError extends RewindError {
  override readonly name = "RewindBeforeFullRefreshError";
  override readonly errorCode = "REWIND_BEFORE_FULL_REFRESH";
  constructor(
    /** `refreshedAt` is unknown when only the table's new identity shows it was dropped and recreated. */
    readonly refreshes: readonly { readonly dataset: string; readonly refreshedAt?: number }[],
    readonly targetTime: number,
  ) {
    super(
      `the rewind target (${new Date(targetTime).toISOString()}) is before the last full refresh of ${refreshes
        .map(
          (r) =>
            `${r.dataset} (${r.refreshedAt === undefined ? "dropped and recreated since" : new Date(r.refreshedAt).toISOString()})`,
        )
        .join(
          ", ",
        )}: the data it held then was discarded; pick a point after the refresh, or leave the dataset out`,
      { data: { refreshes, targetTime } },
    );
  }
}

/** Another update holds the pipeline. */
export class PipelineBusyError extends RewindError {
  override readonly name = "PipelineBusyError";
  override readonly errorCode = "PIPELINE_BUSY";
  override readonly httpStatus = 409;
  constructor(readonly activeUpdateId: string) {
    super(
      `update ${activeUpdateId} is running on this pipeline; only one update runs at a time: wait for it to finish, or stop it first`,
      { data: { activeUpdateId } },
    );
  }
}

/** A rewind failed part-way and the pipeline refuses other updates until one succeeds. */
export class RewindIncompleteError extends RewindError {
  override readonly name = "RewindIncompleteError";
  override readonly errorCode = "PIPELINE_REWIND_INCOMPLETE";
  override readonly httpStatus = 409;
  constructor(readonly blockedBy: string) {
    super(
      `rewind update ${blockedBy} failed part-way, leaving the pipeline partly rewound: rewind again (to the same or another point) to converge, or set the pipeline configuration pipelines.allowUpdateAfterIncompleteRewind = "true" to run anyway`,
      { data: { blockedBy } },
    );
  }
}

/**
 * A refresh was stopped (or failed) between resetting a table and moving its flows' HEAD to the root:
 * an update that does not reset those datasets again would read on from the old checkpoints into the
 * emptied tables and lose their rows for good, so it is refused until a full refresh of them, or a
 * rewind to a point before it, converges (semantics.md "Refresh and reset").
 */
export class RefreshIncompleteError extends RewindError {
  override readonly name = "RefreshIncompleteError";
  override readonly errorCode = "PIPELINE_REFRESH_INCOMPLETE";
  override readonly httpStatus = 409;
  constructor(
    readonly stoppedUpdateId: string,
    readonly datasets: readonly string[],
  ) {
    const list = datasets.join(", ");
    const selection = JSON.stringify(datasets);
    super(
      `update ${stoppedUpdateId} was stopped part-way through resetting ${datasets.length === 1 ? "dataset" : "datasets"} ${list}: a table may be reset while its flows still hold their checkpoints, so an update that does not reset ${datasets.length === 1 ? "it" : "them"} would lose rows; run a full refresh of ${datasets.length === 1 ? "it" : "them"} (full_refresh_selection: ${selection}, or full_refresh: true), or rewind to a point before update ${stoppedUpdateId}`,
      { data: { stoppedUpdateId, datasets: [...datasets] } },
    );
  }
}

/**
 * The current definition cannot continue from the state a rewind would restore (semantics.md
 * "Replay"): reported by the rewind and its dry run, before anything changes, rather than by the replay.
 */
export class IncompatibleRestoredStateError extends RewindError {
  override readonly name = "IncompatibleRestoredStateError";
  override readonly errorCode = "INVALID_PARAMETER_VALUE";
  constructor(
    readonly flow: string,
    reason: string,
  ) {
    super(
      `flow ${flow} could not replay from the rewind target: ${reason}; deploy a definition compatible with that state, rewind to another point, or fully refresh the flow's dataset`,
      { data: { flow, reason } },
    );
  }
}

/** Something else moved a flow's HEAD while the rewind ran (an update started regardless). */
export class ConcurrentRewindChangeError extends RewindError {
  override readonly name = "ConcurrentRewindChangeError";
  override readonly errorCode = "RESOURCE_CONFLICT";
  override readonly httpStatus = 409;
  constructor(
    readonly flow: string,
    readonly targetSeq: number,
    outcome: string,
  ) {
    super(
      `could not move flow ${flow}'s HEAD to checkpoint ${targetSeq} (${outcome}): something changed it during the rewind; rewind again to converge`,
      { data: { flow, targetSeq, outcome } },
    );
  }
}

/** A dataset named in both `full_refresh_selection` and `refresh_selection` (Databricks refuses it too). */
export class RefreshSelectionOverlapError extends RewindError {
  override readonly name = "RefreshSelectionOverlapError";
  override readonly errorCode = "REFRESH_SELECTION_OVERLAP";
  constructor(readonly datasets: readonly string[]) {
    super(
      `${datasets.join(", ")} ${datasets.length === 1 ? "is" : "are"} in both full_refresh_selection and refresh_selection: a dataset is either refreshed in full or run incrementally; name each in one of them`,
      { data: { datasets } },
    );
  }
}

/** A rewind of a pipeline that does not have rewind turned on. */
export class RewindNotEnabledError extends RewindError {
  override readonly name = "RewindNotEnabledError";
  override readonly errorCode = "INVALID_PARAMETER_VALUE";
  constructor() {
    super(
      'rewind is not enabled on this pipeline: set the configuration pipelines.rewind.enabled = "true" and run the pipeline once, so that rewind points are captured',
    );
  }
}

/**
 * A dataset's rewind failed part-way: the cause, naming the dataset the rewind stopped at and the way
 * out. It keeps the cause's name and code, so Retry, Catch and the API treat it as the cause; not a
 * `RewindError`, which are refusals raised before anything changes.
 */
export class RewindStoppedError extends CodedError {
  override readonly name: string;
  override readonly errorCode: string;
  override readonly httpStatus = 409;
  constructor(
    readonly identifier: string,
    cause: unknown,
  ) {
    const message = cause instanceof Error ? cause.message : String(cause);
    super(
      `the rewind stopped at ${identifier}: ${message}. The pipeline stays rewind-blocked: once that is fixed, send the rewind again (to this point or another); it converges without restoring twice`,
      { cause, data: { identifier } },
    );
    this.name = cause instanceof Error ? cause.name : "Error";
    const code = (cause as { errorCode?: unknown } | undefined)?.errorCode;
    this.errorCode = typeof code === "string" ? code : "INTERNAL_ERROR";
  }
}
