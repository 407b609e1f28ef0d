import { randomUUID } from "node:crypto";
import { DuckSession, type DuckRow } from "../../../shared/duck/duck-session.ts";
import { DeltaTable } from "../../../shared/delta/index.ts";
import { DatasetCatalog } from "../../../shared/engine/dataset-catalog.ts";
import { runUpdate, type EngineServices, type UpdateResult } from "../../../shared/engine/update-runner.ts";
import { SqlReferenceParser } from "../../../shared/pipeline/sql-references.ts";
import { validatePipeline, type ValidatedPipeline } from "../../../shared/pipeline/validate-pipeline.ts";
import type { RewindEnvironment } from "../../../shared/rewind/rewind-environment.ts";
import { rewindEnvironment } from "../../../shared/rewind/engine-environment.ts";
import { executeRefreshPlan } from "../../../shared/rewind/refresh-execution.ts";
import { planRefresh } from "../../../shared/rewind/refresh-plan.ts";
import { parseRefreshRequest } from "../../../shared/rewind/refresh-request.ts";
import { runRewind } from "../../../shared/rewind/rewind-update.ts";
import { parseRewindSpec } from "../../../shared/rewind/rewind-spec.ts";
import { MemoryObjectStore } from "../../../shared/store/memory-object-store.ts";
import { MemoryPipelinesRepository } from "../../../shared/store/memory-pipelines-repository.ts";
import { MemoryCheckpointsRepository } from "../../../shared/store/memory-checkpoints-repository.ts";
import { MemoryEventLogRepository } from "../../../shared/store/memory-event-log-repository.ts";
import type { EventLogRepository, PipelineEvent } from "../../../shared/store/event-log-repository.ts";
import type { CheckpointsRepository } from "../../../shared/store/checkpoints-repository.ts";
import type { UpdatesRepository } from "../../../shared/store/updates-repository.ts";
import { eventsOfType } from "../../../shared/rewind/rewind-events.ts";
import type { ObjectStore } from "../../../shared/store/object-store.ts";
import { withPrefix } from "../../../shared/store/prefixed-object-store.ts";
import type { PipelinesRepository, RewindBlock } from "../../../shared/store/pipelines-repository.ts";
import { MemoryUpdatesRepository } from "../../../shared/store/memory-updates-repository.ts";

/** A clock that only moves forward: each reading is at least 1 ms after the last. */
export class TestClock {
  private last: number;
  constructor(start = Date.parse("2026-09-01T00:00:00Z")) {
    this.last = start;
  }
  readonly now = (): number => ++this.last;
  advance(ms: number): void {
    this.last += ms;
  }
  peek(): number {
    return this.last;
  }
}

let parser: Promise<SqlReferenceParser> | undefined;
let reader: Promise<DuckSession> | undefined;

/** One DuckDB session per test process for reading tables back (opening one per read is slow). */
function readerSession(): Promise<DuckSession> {
  return (reader ??= DuckSession.open());
}
function sqlParser(): Promise<SqlReferenceParser> {
  return (parser ??= SqlReferenceParser.open());
}

/** The stores a harness runs on. */
export interface HarnessPorts {
  /** The pipeline's bucket (tables and state). */
  readonly store: ObjectStore;
  /** Where source files land. */
  readonly landing: ObjectStore;
  readonly checkpoints: CheckpointsRepository;
  readonly events: EventLogRepository;
  readonly updates: UpdatesRepository;
  readonly pipelines: PipelinesRepository;
}

/** In-memory stores: fast enough for property tests. */
export function memoryPorts(clock: TestClock): HarnessPorts {
  const store = new MemoryObjectStore(clock.now);
  return {
    store,
    landing: withPrefix(store, "landing/"),
    checkpoints: new MemoryCheckpointsRepository(clock.now),
    events: new MemoryEventLogRepository(clock.now),
    updates: new MemoryUpdatesRepository(clock.now),
    pipelines: new MemoryPipelinesRepository(clock.now),
  };
}

/**
 * The engine and the rewind domain for one pipeline: the real update runner, the real Delta tables and
 * state files, on in-memory stores by default (or the ports given, e.g. the AWS stand-ins), with a
 * test clock.
 */
export class RewindHarness {
  /** Set by the first `deploy` (the Pipelines repository hands out ids). */
  pipelineId = "";
  readonly clock: TestClock;
  readonly store: ObjectStore;
  readonly landing: ObjectStore;
  readonly landingUri = "s3://landing-bucket/raw/";
  readonly checkpoints: CheckpointsRepository;
  readonly events: EventLogRepository;
  readonly updates: UpdatesRepository;
  readonly pipelines: PipelinesRepository;

  constructor(
    options: { readonly clock?: TestClock; readonly ports?: (clock: TestClock) => HarnessPorts } = {},
  ) {
    this.clock = options.clock ?? new TestClock();
    const ports = (options.ports ?? memoryPorts)(this.clock);
    this.store = ports.store;
    this.landing = ports.landing;
    this.checkpoints = ports.checkpoints;
    this.events = ports.events;
    this.updates = ports.updates;
    this.pipelines = ports.pipelines;
  }

  private definitionVersion = 0;
  pipeline!: ValidatedPipeline;

  get services(): EngineServices {
    return {
      store: this.store,
      checkpoints: this.checkpoints,
      updates: this.updates,
      events: this.events,
      locate: this.locate,
      clock: this.clock.now,
    };
  }

  readonly locate = (location: string): ObjectStore => {
    if (location !== this.landingUri) throw new Error(`unknown location ${location}`);
    return withPrefix(this.landing, "raw/");
  };

  env(pipeline: ValidatedPipeline = this.pipeline): RewindEnvironment {
    return rewindEnvironment(this.services, this.pipelines, this.pipelineId, pipeline);
  }

  /** Validates and makes `definition` the current one ("deploy"). */
  async deploy(definition: unknown): Promise<ValidatedPipeline> {
    this.pipeline = await validatePipeline(definition, await sqlParser());
    if (this.pipelineId === "") {
      this.pipelineId = (await this.pipelines.create(this.pipeline.definition)).pipelineId;
      this.definitionVersion = 1;
    } else {
      const edited = await this.pipelines.edit(
        this.pipelineId,
        this.pipeline.definition,
        this.definitionVersion,
      );
      if (edited.outcome !== "edited") throw new Error(`deploy lost a race: ${edited.outcome}`);
      this.definitionVersion = edited.version;
    }
    return this.pipeline;
  }

  /** The pipeline's rewind block, as the Pipelines repository holds it. */
  async rewindBlock(): Promise<RewindBlock> {
    const record = (await this.pipelines.get(this.pipelineId))!;
    return record.rewindBlocked ? { blocked: true, byUpdateId: record.rewindBlockedBy! } : { blocked: false };
  }

  async land(name: string, text: string): Promise<void> {
    await this.locate(this.landingUri).put(name, new TextEncoder().encode(text));
  }

  async run(selection?: string[]): Promise<UpdateResult> {
    const result = await runUpdate(this.services, {
      pipelineId: this.pipelineId,
      pipeline: this.pipeline,
      definitionVersion: this.definitionVersion,
      ...(selection ? { selection } : {}),
    });
    if (result.state !== "COMPLETED") throw result.error;
    return result;
  }

  async rewind(spec: unknown, updateId = `rewind-${randomUUID()}`) {
    return runRewind(this.env(), parseRewindSpec(spec, this.clock.now()), updateId);
  }

  /** A run request's resets (FULL / RESET / checkpoint resets), then its run unless RESET. */
  async refresh(request: Record<string, unknown>): Promise<void> {
    const plan = planRefresh(this.pipeline, parseRefreshRequest(request));
    await executeRefreshPlan(this.env(), plan, `refresh-${randomUUID()}`);
    if (plan.mode !== "RESET") await this.run([...(plan.runFlows ?? plan.run)]);
  }

  /** The pipeline's live events of a type, oldest first. */
  async eventsOf(eventType: string): Promise<PipelineEvent[]> {
    return (await eventsOfType(this.events, this.pipelineId, eventType)).reverse();
  }

  tableStore(dataset: string): ObjectStore {
    return new DatasetCatalog(this.pipeline, this.store).tableStore(dataset);
  }

  /** Every row of a dataset (empty when it has no table), sorted by `orderBy`. */
  async rows(dataset: string, orderBy = "id"): Promise<DuckRow[]> {
    let table: DeltaTable;
    try {
      table = await DeltaTable.open(this.tableStore(dataset), { duck: await readerSession() });
    } catch {
      return [];
    }
    try {
      const rows = await table.scan();
      return rows.sort(
        (a, b) =>
          Number(a[orderBy]) - Number(b[orderBy]) || String(a[orderBy]).localeCompare(String(b[orderBy])),
      );
    } finally {
      await table.close();
    }
  }
}

/** `n` JSON lines `{"id", "amount", "region"}` for ids `from .. from + n - 1`. */
export function jsonLines(from: number, n: number): string {
  const regions = ["eu", "us", "apac"];
  return (
    Array.from({ length: n }, (_, i) => {
      const id = from + i;
      return JSON.stringify({ id, amount: id * 10, region: regions[id % 3] });
    }).join("\n") + "\n"
  );
}
