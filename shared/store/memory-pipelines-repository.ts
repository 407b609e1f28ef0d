import { applyMemoryWrites, memoryWrite } from "./memory-store-writes.ts";
import { checkChangeFits, movedTables, type StoreWrite } from "./store-writes.ts";
import { randomUUID } from "node:crypto";
import type { PipelineDefinition } from "../pipeline/definition-schema.ts";
import { pipelineTables } from "../pipeline/pipeline-tables.ts";
import { DefinitionVersionNotFoundError, PipelineNotFoundError, TableOwnedError } from "./errors.ts";
import {
  storedDefinitionJson,
  type ActiveUpdateResult,
  type BeginUpdateOptions,
  type BeginUpdateResult,
  type DefinitionVersion,
  type DeleteOptions,
  type DeleteResult,
  type EditResult,
  type PipelineRecord,
  type PipelineState,
  type PipelinesRepository,
  type ResetUnderWay,
  type RewindBlock,
} from "./pipelines-repository.ts";
import { isBranchId } from "./bucket-layout.ts";

interface StoredPipeline {
  record: PipelineRecord;
  /** Definition JSON by version (index 0 is version 1), as the DynamoDB adapter keeps it. */
  readonly versions: { readonly json: string; readonly createdAt: number }[];
  /** The tables its current definition claims. */
  tables: readonly string[];
}

/**
 * Pipelines in memory, for fast tests of the control plane. Same contract as the DynamoDB adapter,
 * checked by the same contract tests. Each method runs without awaiting in between, so concurrent
 * calls see each other's writes as DynamoDB's conditions would.
 */
export class MemoryPipelinesRepository implements PipelinesRepository {
  private readonly pipelines = new Map<string, StoredPipeline>();
  /** Table → owning pipeline id. */
  private readonly owners = new Map<string, string>();

  constructor(private readonly now: () => number = Date.now) {}

  async create(definition: PipelineDefinition): Promise<PipelineRecord> {
    const json = storedDefinitionJson(definition);
    const tables = pipelineTables(definition);
    checkChangeFits({ name: definition.name }, movedTables([], tables), []);
    this.assertClaimable(tables, undefined);
    const now = this.now();
    const record: PipelineRecord = {
      pipelineId: randomUUID(),
      name: definition.name,
      definitionVersion: 1,
      state: "IDLE",
      rewindBlocked: false,
      createdAt: now,
      lastModified: now,
    };
    this.pipelines.set(record.pipelineId, { record, versions: [{ json, createdAt: now }], tables });
    for (const table of tables) this.owners.set(table, record.pipelineId);
    return { ...record };
  }

  async get(pipelineId: string): Promise<PipelineRecord | undefined> {
    const stored = this.pipelines.get(pipelineId);
    return stored && { ...stored.record };
  }

  async list(): Promise<PipelineRecord[]> {
    return [...this.pipelines.values()]
      .filter((stored) => !isBranchId(stored.record.pipelineId))
      .map((stored) => ({ ...stored.record }))
      .sort((a, b) => b.createdAt - a.createdAt || a.pipelineId.localeCompare(b.pipelineId));
  }

  async addBranch(branchPipelineId: string, name: string): Promise<void> {
    if (this.pipelines.has(branchPipelineId)) return;
    const now = this.now();
    const record: PipelineRecord = {
      pipelineId: branchPipelineId,
      name,
      definitionVersion: 1,
      state: "IDLE",
      rewindBlocked: false,
      createdAt: now,
      lastModified: now,
    };
    this.pipelines.set(branchPipelineId, { record, versions: [], tables: [] });
  }

  async getDefinition(pipelineId: string, version?: number): Promise<DefinitionVersion> {
    const stored = this.pipelines.get(pipelineId);
    if (!stored) {
      if (version === undefined) throw new PipelineNotFoundError(pipelineId);
      throw new DefinitionVersionNotFoundError(pipelineId, version);
    }
    const wanted = version ?? stored.record.definitionVersion;
    const found = stored.versions[wanted - 1];
    if (!found) throw new DefinitionVersionNotFoundError(pipelineId, wanted);
    return {
      pipelineId,
      version: wanted,
      definition: JSON.parse(found.json) as PipelineDefinition,
      createdAt: found.createdAt,
    };
  }

  async listDefinitions(pipelineId: string): Promise<DefinitionVersion[]> {
    const stored = this.require(pipelineId);
    return Promise.all(stored.versions.map((_, i) => this.getDefinition(pipelineId, i + 1)));
  }

  async edit(
    pipelineId: string,
    definition: PipelineDefinition,
    expectedVersion: number,
    writes: readonly StoreWrite[] = [],
  ): Promise<EditResult> {
    const json = storedDefinitionJson(definition);
    const stored = this.require(pipelineId);
    const tables = pipelineTables(definition);
    checkChangeFits({ id: pipelineId, name: definition.name }, movedTables(stored.tables, tables), writes);
    // Another pipeline's table is refused whatever the version, as DynamoDB reports every failed condition.
    this.assertClaimable(tables, pipelineId);
    const own = memoryWrite({
      check: () => stored.record.definitionVersion === expectedVersion,
      apply: () => {
        for (const table of stored.tables) this.owners.delete(table);
        for (const table of tables) this.owners.set(table, pipelineId);
        stored.tables = tables;
        const now = this.now();
        stored.versions.push({ json, createdAt: now });
        stored.record = {
          ...stored.record,
          definitionVersion: expectedVersion + 1,
          name: definition.name,
          lastModified: now,
        };
      },
    });
    if (!applyMemoryWrites([own, ...writes]))
      return { outcome: "version-conflict", currentVersion: stored.record.definitionVersion };
    return { outcome: "edited", version: expectedVersion + 1 };
  }

  async delete(pipelineId: string, options: DeleteOptions = {}): Promise<DeleteResult> {
    const stored = this.require(pipelineId);
    if (stored.record.activeUpdateId)
      return { outcome: "pipeline-busy", activeUpdateId: stored.record.activeUpdateId };
    this.pipelines.delete(pipelineId);
    if (!options.keepTables) this.release(pipelineId, stored.tables);
    return { outcome: "deleted", tables: stored.tables };
  }

  async tableOwner(table: string): Promise<string | undefined> {
    return this.owners.get(table);
  }

  async releaseTables(pipelineId: string, tables: readonly string[]): Promise<void> {
    this.release(pipelineId, tables);
  }

  private release(pipelineId: string, tables: readonly string[]): void {
    for (const table of tables) if (this.owners.get(table) === pipelineId) this.owners.delete(table);
  }

  private assertClaimable(tables: readonly string[], pipelineId: string | undefined): void {
    for (const table of tables) {
      const owner = this.owners.get(table);
      if (owner !== undefined && owner !== pipelineId) throw new TableOwnedError(table, owner);
    }
  }

  async beginUpdate(
    pipelineId: string,
    updateId: string,
    state: PipelineState = "RUNNING",
    options: BeginUpdateOptions = {},
  ): Promise<BeginUpdateResult> {
    const stored = this.require(pipelineId);
    if (stored.record.activeUpdateId)
      return { outcome: "pipeline-busy", activeUpdateId: stored.record.activeUpdateId };
    const { tablesWrittenBy, ...record } = stored.record;
    stored.record = {
      ...record,
      ...(tablesWrittenBy !== undefined && !options.restoresTables ? { tablesWrittenBy } : {}),
      activeUpdateId: updateId,
      state,
      lastModified: this.now(),
    };
    return { outcome: "begun", pipeline: { ...stored.record } };
  }

  async setState(pipelineId: string, updateId: string, state: PipelineState): Promise<ActiveUpdateResult> {
    return this.whileActive(pipelineId, updateId, withState(state));
  }

  async endUpdate(
    pipelineId: string,
    updateId: string,
    state: "IDLE" | "FAILED",
    tablesWrittenBy?: number,
  ): Promise<ActiveUpdateResult> {
    return this.whileActive(pipelineId, updateId, ended(state, tablesWrittenBy));
  }

  setStateWrite(pipelineId: string, updateId: string, state: PipelineState): StoreWrite {
    return this.whileActiveWrite(pipelineId, updateId, withState(state));
  }

  endUpdateWrite(
    pipelineId: string,
    updateId: string,
    state: "IDLE" | "FAILED",
    tablesWrittenBy?: number,
  ): StoreWrite {
    return this.whileActiveWrite(pipelineId, updateId, ended(state, tablesWrittenBy));
  }

  private whileActiveWrite(
    pipelineId: string,
    updateId: string,
    change: (record: PipelineRecord) => PipelineRecord,
  ): StoreWrite {
    return memoryWrite({
      check: () => this.pipelines.get(pipelineId)?.record.activeUpdateId === updateId,
      apply: () => void this.whileActive(pipelineId, updateId, change),
    });
  }

  async setRewindBlock(pipelineId: string, block: RewindBlock): Promise<void> {
    const stored = this.require(pipelineId);
    const { rewindBlockedBy: _previous, ...record } = stored.record;
    stored.record = block.blocked
      ? { ...record, rewindBlocked: true, rewindBlockedBy: block.byUpdateId, lastModified: this.now() }
      : { ...record, rewindBlocked: false, lastModified: this.now() };
  }

  async markResetUnderWay(pipelineId: string, mark: ResetUnderWay): Promise<ActiveUpdateResult> {
    return this.whileActive(pipelineId, mark.updateId, (record) => ({
      ...record,
      resetUnderWay: { ...mark, datasets: [...mark.datasets] },
    }));
  }

  async clearResetUnderWay(pipelineId: string): Promise<void> {
    const stored = this.require(pipelineId);
    const { resetUnderWay: _previous, ...record } = stored.record;
    stored.record = { ...record, lastModified: this.now() };
  }

  private whileActive(
    pipelineId: string,
    updateId: string,
    change: (record: PipelineRecord) => PipelineRecord,
  ): ActiveUpdateResult {
    const stored = this.require(pipelineId);
    const active = stored.record.activeUpdateId;
    if (active !== updateId) return { outcome: "not-active", ...(active ? { activeUpdateId: active } : {}) };
    stored.record = { ...change(stored.record), lastModified: this.now() };
    return { outcome: "updated" };
  }

  private require(pipelineId: string): StoredPipeline {
    const stored = this.pipelines.get(pipelineId);
    if (!stored) throw new PipelineNotFoundError(pipelineId);
    return stored;
  }
}

function withState(state: PipelineState): (record: PipelineRecord) => PipelineRecord {
  return (record) => ({ ...record, state });
}

/** The pipeline released from its active update, resting in `state`. */
function ended(
  state: "IDLE" | "FAILED",
  tablesWrittenBy: number | undefined,
): (record: PipelineRecord) => PipelineRecord {
  return ({ activeUpdateId: _ended, ...record }) => ({
    ...record,
    state,
    ...(tablesWrittenBy !== undefined ? { tablesWrittenBy } : {}),
  });
}
