import type { LifecycleEvent } from "../../../shared/api/lifecycle-events.ts";
import { DuckSession, type DuckRow } from "../../../shared/duck/duck-session.ts";
import { DeltaTable, tablePropertiesError } from "../../../shared/delta/index.ts";
import { parseWith } from "../../../shared/api/request-body.ts";
import { startUpdateBody } from "../../../shared/api/request-schemas.ts";
import { rewindEnvironment, type ControlPlane } from "../../../shared/control/plane/control-plane.ts";
import { InProcessExecutions } from "../../../shared/control/updates/driver/in-process-executions.ts";
import { startUpdate } from "../../../shared/control/updates/start-update.ts";
import type { DrivenUpdate, DriverOptions } from "../../../shared/control/updates/driver/update-driver.ts";
import { DatasetCatalog } from "../../../shared/engine/dataset-catalog.ts";
import { SqlReferenceParser } from "../../../shared/pipeline/sql-references.ts";
import { validatePipeline, type ValidatedPipeline } from "../../../shared/pipeline/validate-pipeline.ts";
import type { RewindEnvironment } from "../../../shared/rewind/rewind-environment.ts";
import { MemoryObjectStore } from "../../../shared/object-store/memory-object-store.ts";
import { MemoryPipelinesRepository } from "../../../shared/store/memory-pipelines-repository.ts";
import { MemoryCheckpointsRepository } from "../../../shared/store/memory-checkpoints-repository.ts";
import { MemoryEventLogRepository } from "../../../shared/store/memory-event-log-repository.ts";
import type { EventLogRepository, PipelineEvent } from "../../../shared/store/event-log-repository.ts";
import type { CheckpointsRepository } from "../../../shared/store/checkpoints-repository.ts";
import type { UpdatesRepository } from "../../../shared/store/updates-repository.ts";
import { eventsOfType } from "../../../shared/rewind/rewind-events.ts";
import type { ObjectStore } from "../../../shared/object-store/object-store.ts";
import { withPrefix } from "../../../shared/object-store/prefixed-object-store.ts";
import type { PipelinesRepository, RewindBlock } from "../../../shared/store/pipelines-repository.ts";
import { MemoryUpdatesRepository } from "../../../shared/store/memory-updates-repository.ts";
import { networkEventStreams } from "../../../shared/store/event-stream-clients.ts";

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
  const pipelines = new MemoryPipelinesRepository(clock.now);
  return {
    store,
    landing: withPrefix(store, "landing/"),
    checkpoints: new MemoryCheckpointsRepository(
      clock.now,
      async (pipelineId) => (await pipelines.get(pipelineId))?.activeUpdateId,
    ),
    events: new MemoryEventLogRepository(clock.now),
    updates: new MemoryUpdatesRepository(clock.now),
    pipelines,
  };
}

/** A finished update as a test sees it: the driver's answer and the update's id. */
export interface FinishedUpdate extends DrivenUpdate {
  readonly updateId: string;
}

/** A rewind update as a test sees it, from its events (what a user sees). */
export interface FinishedRewind {
  readonly updateId: string;
  readonly dryRun: boolean;
  /** Its `rewind_summary` event (a point id for a dry run). */
  readonly summaryEventId: string;
  /** The datasets planned, upstream first, with their target versions (null: emptied). */
  readonly datasets: readonly {
    readonly dataset: string;
    readonly action: string;
    readonly targetVersion: number | null;
  }[];
  /** The views reading them (`catalog.schema.name`), as the plan names them. */
  readonly views: readonly string[];
}

/**
 * One pipeline on the production path: updates start through `startUpdate` and run the control-plane
 * steps through the in-process driver, on the real Delta tables and state files, on in-memory stores
 * by default (or the ports given, e.g. the AWS stand-ins), with a test clock. `faults` lets a test
 * break the bucket the steps see.
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
  readonly plane: ControlPlane;
  readonly executions: InProcessExecutions;
  /** A bucket write fails with the error this answers for its key (none by default). */
  faults: (key: string) => Error | undefined = () => undefined;
  /** Every key the control plane asked `head` of, in order (how often files were checked). */
  readonly headed: string[] = [];

  constructor(
    options: {
      readonly clock?: TestClock;
      readonly ports?: (clock: TestClock) => HarnessPorts;
      readonly driver?: Omit<DriverOptions, "stopped">;
    } = {},
  ) {
    this.clock = options.clock ?? new TestClock();
    const ports = (options.ports ?? memoryPorts)(this.clock);
    this.store = ports.store;
    this.landing = ports.landing;
    this.checkpoints = ports.checkpoints;
    this.events = ports.events;
    this.updates = ports.updates;
    this.pipelines = ports.pipelines;
    this.executions = new InProcessExecutions(() => this.plane, options.driver);
    this.plane = {
      pipelines: this.pipelines,
      updates: this.updates,
      checkpoints: this.checkpoints,
      events: this.events,
      bucket: faulty(
        this.store,
        (key) => this.faults(key),
        (key) => this.headed.push(key),
      ),
      locate: this.locate,
      eventStreams: networkEventStreams,
      localRoots: [],
      executions: this.executions,
      sql: {
        analyze: async (sql) => (await sqlParser()).analyze(sql),
        analyzeCondition: async (condition) => (await sqlParser()).analyzeCondition(condition),
        deparse: async (statement) => (await sqlParser()).deparse(statement),
      },
      lifecycle: {
        hasDestination: true,
        publish: async (event, delivered) => {
          this.published.push(event);
          await delivered?.();
        },
      },
      clock: this.clock.now,
    };
  }

  /** The lifecycle events the steps published, in order (docs/events.md). */
  readonly published: LifecycleEvent[] = [];

  pipeline!: ValidatedPipeline;

  readonly locate = (location: string): ObjectStore => {
    if (location !== this.landingUri) throw new Error(`unknown location ${location}`);
    return withPrefix(this.landing, "raw/");
  };

  env(pipeline: ValidatedPipeline = this.pipeline): RewindEnvironment {
    return rewindEnvironment(this.plane, this.pipelineId, pipeline);
  }

  /** Validates and makes `definition` the current one ("deploy"). */
  async deploy(definition: unknown): Promise<ValidatedPipeline> {
    this.pipeline = await validatePipeline(definition, await sqlParser(), tablePropertiesError);
    if (this.pipelineId === "") {
      this.pipelineId = (await this.pipelines.create(this.pipeline.definition)).pipelineId;
    } else {
      const current = (await this.pipelines.getDefinition(this.pipelineId)).version;
      const edited = await this.pipelines.edit(this.pipelineId, this.pipeline.definition, current);
      if (edited.outcome !== "edited") throw new Error(`deploy lost a race: ${edited.outcome}`);
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

  /** Starts an update with a start-update body (as the API validates it) and waits for its end. */
  async start(body: Record<string, unknown> = {}): Promise<FinishedUpdate> {
    const { update_id } = await startUpdate(this.plane, this.pipelineId, parseWith(startUpdateBody, body));
    return { ...(await this.executions.settled(update_id)), updateId: update_id };
  }

  /** A run (of `selection` only, if given); throws its error unless it COMPLETED. */
  async run(selection?: string[]): Promise<FinishedUpdate> {
    return completed(await this.start(selection ? { selection } : {}));
  }

  /** A rewind update; throws its error (a refusal from start-update, or a failure) unless it COMPLETED. */
  async rewind(spec: unknown): Promise<FinishedRewind> {
    const { updateId } = completed(await this.start({ rewind_spec: spec }));
    const ofUpdate = async (type: string) =>
      (await this.eventsOf(type)).filter((e) => e.origin.update_id === updateId);
    const [planning] = await ofUpdate("planning_information");
    const summary = (await ofUpdate("rewind_summary")).at(-1)!;
    const planned = (planning!.details["planning_information"] as {
      datasets: { dataset: string; action: string; target_version: number | null }[];
      views: string[];
      dry_run: boolean;
    })!;
    return {
      updateId,
      dryRun: planned.dry_run,
      summaryEventId: summary.id,
      datasets: planned.datasets.map((d) => ({
        dataset: d.dataset.split(".").at(-1)!,
        action: d.action,
        targetVersion: d.target_version,
      })),
      views: planned.views,
    };
  }

  /** A run request's resets (FULL / RESET / checkpoint resets), then its run unless RESET. */
  async refresh(request: Record<string, unknown>): Promise<FinishedUpdate> {
    return completed(await this.start(request));
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

function completed(update: FinishedUpdate): FinishedUpdate {
  if (update.state === "COMPLETED") return update;
  throw update.error ?? new Error(`update ${update.updateId} ended ${update.state}`);
}

/** `store` whose writes fail where `fault` answers an error for the key; `headed` hears each `head`. */
function faulty(
  store: ObjectStore,
  fault: (key: string) => Error | undefined,
  headed: (key: string) => void,
): ObjectStore {
  const check = (key: string) => {
    const error = fault(key);
    if (error) throw error;
  };
  return {
    get: (key) => store.get(key),
    getRange: (key, range) => store.getRange(key, range),
    list: (prefix, options) => store.list(prefix, options),
    head: (key) => (headed(key), store.head(key)),
    put: async (key, body) => (check(key), store.put(key, body)),
    putIfAbsent: async (key, body) => (check(key), store.putIfAbsent(key, body)),
    putIfMatch: async (key, body, etag) => (check(key), store.putIfMatch(key, body, etag)),
    delete: async (key) => (check(key), store.delete(key)),
    deleteMany: async (keys) => (keys.forEach(check), store.deleteMany(keys)),
  };
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
