import type { StoreWrite } from "./store-writes.ts";
import type { PipelineDefinition } from "../pipeline/definition-schema.ts";
import { DefinitionTooLargeError } from "./errors.ts";

/**
 * The Pipelines repository port (architecture.md "Storage": settings, definition versions, state,
 * active update). Every edit makes a new definition version and keeps the old ones; only one update
 * is active per pipeline at a time, and a second start is a `PipelineBusy` result, not an exception.
 *
 * The repository is also the registry of table owners: every table of a pipeline's current
 * definition (`pipelineTables`) is claimed for it in the same transaction as the create or edit that
 * declares it, and released when an edit drops it or the pipeline is deleted. A table another
 * pipeline has claimed makes the create or edit fail with `TableOwnedError`, changing nothing.
 */

/**
 * The largest definition (as JSON) a version may hold: what fits in one DynamoDB item (400 KB) with
 * room for the other attributes. Every adapter refuses larger ones with `DefinitionTooLargeError`.
 */
export const MAX_DEFINITION_BYTES = 380_000;

/** The definition as every adapter stores it (JSON), or `DefinitionTooLargeError`. */
export function storedDefinitionJson(definition: PipelineDefinition): string {
  const json = JSON.stringify(definition);
  const bytes = Buffer.byteLength(json);
  if (bytes > MAX_DEFINITION_BYTES) throw new DefinitionTooLargeError(bytes, MAX_DEFINITION_BYTES);
  return json;
}

import { PIPELINE_STATES } from "./record-states.ts";

export { PIPELINE_STATES };
export type PipelineState = (typeof PIPELINE_STATES)[number];

export interface PipelineRecord {
  readonly pipelineId: string;
  /** The display name, from the current definition. */
  readonly name: string;
  /** The current definition version: 1 at creation, +1 per edit. */
  readonly definitionVersion: number;
  readonly state: PipelineState;
  /** The update that holds the pipeline, while one runs. */
  readonly activeUpdateId?: string;
  /** A rewind failed part-way: non-rewind updates are refused until a rewind succeeds (semantics.md). */
  readonly rewindBlocked: boolean;
  /** The rewind update that left the pipeline blocked. */
  readonly rewindBlockedBy?: string;
  /**
   * A refresh's resets are under way, or were stopped part-way (semantics.md "Refresh and reset"):
   * updates that do not reset these datasets again are refused until a full refresh of them or a
   * rewind to a point before it.
   */
  readonly resetUnderWay?: ResetUnderWay;
  /**
   * The definition version whose run last completed, so every table holds that version's output.
   * Absent before the first completed run and from the start of a rewind on (the tables then hold a
   * point's output, whichever definition wrote it).
   */
  readonly tablesWrittenBy?: number;
  /** Epoch milliseconds. */
  readonly createdAt: number;
  readonly lastModified: number;
}

export interface DefinitionVersion {
  readonly pipelineId: string;
  readonly version: number;
  readonly definition: PipelineDefinition;
  /** Epoch milliseconds. */
  readonly createdAt: number;
}

/** Another update holds the pipeline (API: `PIPELINE_BUSY`, 409). */
export interface PipelineBusy {
  readonly outcome: "pipeline-busy";
  readonly activeUpdateId: string;
}

export type BeginUpdateResult =
  { readonly outcome: "begun"; readonly pipeline: PipelineRecord } | PipelineBusy;

/** The update is no longer the pipeline's active one (it ended, or another replaced it). */
export interface NotActiveUpdate {
  readonly outcome: "not-active";
  readonly activeUpdateId?: string;
}

export type ActiveUpdateResult = { readonly outcome: "updated" } | NotActiveUpdate;

/** Someone else edited the pipeline since `expectedVersion` was read. */
export interface VersionConflict {
  readonly outcome: "version-conflict";
  readonly currentVersion: number;
}

export type EditResult = { readonly outcome: "edited"; readonly version: number } | VersionConflict;

/** The pipeline is gone; `tables` are the tables it owned (released unless the delete kept them). */
export type DeleteResult = { readonly outcome: "deleted"; readonly tables: readonly string[] } | PipelineBusy;

export interface DeleteOptions {
  /**
   * Keep the deleted pipeline's table claims, so nobody can claim a table before it is purged; the
   * caller releases them with `releaseTables` afterwards. @default false
   */
  readonly keepTables?: boolean;
}

export interface BeginUpdateOptions {
  /** The update restores tables to an earlier point (a rewind that is not a dry run). @default false */
  readonly restoresTables?: boolean;
}

/** The write-ahead mark of a refresh's destructive resets (a table reset, then its flows' HEAD). */
export interface ResetUnderWay {
  /** The update whose refresh set it. */
  readonly updateId: string;
  /** The datasets whose table and flows' HEAD it resets, upstream first. */
  readonly datasets: readonly string[];
  /** Epoch milliseconds, before the first reset. */
  readonly since: number;
}

export type RewindBlock =
  { readonly blocked: true; readonly byUpdateId: string } | { readonly blocked: false };

export interface PipelinesRepository {
  /** Creates the pipeline with definition version 1, state IDLE, and claims its tables. */
  create(definition: PipelineDefinition): Promise<PipelineRecord>;
  /** The pipeline, or undefined if there is none with this id. */
  get(pipelineId: string): Promise<PipelineRecord | undefined>;
  /** Every pipeline, newest first (a branch's item, `addBranch`, is not one). */
  list(): Promise<PipelineRecord[]>;
  /**
   * Makes the item of a branch's own pipeline identity (`<pipelineId>~<branch>`, bucket-layout.ts's
   * `branchPipelineId`) unless it exists: IDLE, no definition of its own, no tables. Updates on the
   * branch begin and end on it (`beginUpdate`, …), so they hold the branch, never live.
   */
  addBranch(branchPipelineId: string, name: string): Promise<void>;
  /** A definition version (the current one when `version` is left out). Throws when absent. */
  getDefinition(pipelineId: string, version?: number): Promise<DefinitionVersion>;
  /** Every definition version, oldest first. */
  listDefinitions(pipelineId: string): Promise<DefinitionVersion[]>;
  /**
   * Stores `definition` as version `expectedVersion + 1` if the current version is still
   * `expectedVersion`, claiming the tables it adds and releasing those it drops. `writes` (another
   * repository's, store-writes.ts: the edit's warning events) are made with it, all or none.
   */
  edit(
    pipelineId: string,
    definition: PipelineDefinition,
    expectedVersion: number,
    writes?: readonly StoreWrite[],
  ): Promise<EditResult>;
  /** Deletes the pipeline and its definition versions, unless an update is active; releases its tables. */
  delete(pipelineId: string, options?: DeleteOptions): Promise<DeleteResult>;
  /** The pipeline that owns `table` (`catalog.schema.table`), if any. */
  tableOwner(table: string): Promise<string | undefined>;
  /** Releases those of `tables` that `pipelineId` still owns (a deleted pipeline's kept claims). */
  releaseTables(pipelineId: string, tables: readonly string[]): Promise<void>;
  /**
   * Makes `updateId` the active update and sets `state`, unless another update is active. An update
   * that restores tables (a rewind) forgets `tablesWrittenBy` as it begins, so a crash mid-rewind
   * cannot leave it claiming tables the rewind already moved.
   */
  beginUpdate(
    pipelineId: string,
    updateId: string,
    state?: PipelineState,
    options?: BeginUpdateOptions,
  ): Promise<BeginUpdateResult>;
  /** Sets the state while `updateId` is the active update. */
  setState(pipelineId: string, updateId: string, state: PipelineState): Promise<ActiveUpdateResult>;
  /**
   * Releases the pipeline from `updateId` and sets its resting state (IDLE, or FAILED); a completed
   * run passes the definition version that wrote the tables (`tablesWrittenBy`).
   */
  endUpdate(
    pipelineId: string,
    updateId: string,
    state: "IDLE" | "FAILED",
    tablesWrittenBy?: number,
  ): Promise<ActiveUpdateResult>;
  /** `setState` as a write to make with another repository's (store-writes.ts). */
  setStateWrite(pipelineId: string, updateId: string, state: PipelineState): StoreWrite;
  /** `endUpdate` as a write to make with another repository's (store-writes.ts). */
  endUpdateWrite(
    pipelineId: string,
    updateId: string,
    state: "IDLE" | "FAILED",
    tablesWrittenBy?: number,
  ): StoreWrite;
  /** Sets or clears the rewind-blocked flag. */
  setRewindBlock(pipelineId: string, block: RewindBlock): Promise<void>;
  /** Sets the reset-under-way mark while `mark.updateId` is the active update (a stopped one sets none). */
  markResetUnderWay(pipelineId: string, mark: ResetUnderWay): Promise<ActiveUpdateResult>;
  /** Clears the reset-under-way mark, whoever set it. */
  clearResetUnderWay(pipelineId: string): Promise<void>;
}
