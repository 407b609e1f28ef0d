import { downstreamClosure, downstreamOf, upstreamClosure } from "../pipeline/pipeline-graph.ts";
import type { ValidatedPipeline } from "../pipeline/validate-pipeline.ts";
import {
  DatasetNotInRewindPointError,
  InconsistentUpstreamCheckpointResetError,
  InvalidCascadeConfigurationError,
  ResetCheckpointsRequiredError,
  RewindDatasetNotFoundError,
  type SuggestedDatasetSpec,
} from "./errors.ts";
import { datasetOf, externalSource, qualifiedName, tableDatasets, writersOf } from "./pipeline-datasets.ts";
import type { RewindDatasetSpec } from "./rewind-spec.ts";

/**
 * Which datasets a rewind covers, and the rules on that set (semantics.md "Rewind request"). Pure.
 *
 * 1. Resolve `datasets[].identifier` (`catalog.schema.table`; case-insensitive) to datasets of this
 *    pipeline; any unknown: `DATASET_NOT_FOUND`. No `datasets`: every dataset, cascade and reset on.
 * 2. Cascade: each dataset with `cascade: true` adds everything downstream of it, which inherits its
 *    `reset_checkpoints` (a dataset listed explicitly keeps its own value).
 * 3. The rewound set is the table datasets reached (views store nothing), upstream first.
 * 4. A dataset with no table version at the target (a deploy since added it, or it had not run yet)
 *    is emptied with the rest (rewind-plan.ts). A streaming table among them needs
 *    reset_checkpoints: emptied while its flows keep their positions, it would never get back what
 *    it held: `DATASET_NOT_IN_REWIND_POINT`. (`REWIND_BEFORE_FULL_REFRESH` is the plan's check, over
 *    every member: `refusedAsBeforeFullRefresh`.)
 * 5. `reset_checkpoints` must agree between a dataset and its upstreams in the set:
 *    else `INCONSISTENT_UPSTREAM_CHECKPOINT_RESET`.
 * 6. `reset_checkpoints: false` on a dataset written from an external source:
 *    `RESET_CHECKPOINTS_REQUIRED`.
 * 7. A streaming reader of a rewound dataset that is left out (or keeps its checkpoint,
 *    reset_checkpoints: false) and has consumed past the dataset's target version would fail on
 *    replay: `INVALID_CASCADE_CONFIGURATION`, naming it. (A materialized view left out is not an
 *    error: it recomputes from scratch on its next update.)
 * 8. A refusal of 5 or 7 names the `datasets` list that works: the request's own, with each reader
 *    that failed added and reset_checkpoints: true on it and its upstreams, checked by these rules.
 */

export interface CascadeInput {
  readonly pipeline: ValidatedPipeline;
  /** Undefined: every dataset, cascade and reset_checkpoints on. */
  readonly datasets?: readonly RewindDatasetSpec[];
  /** Datasets with a table version at the target. */
  readonly inTarget: ReadonlySet<string>;
  /**
   * Whether a flow reading `upstream` as a stream has consumed past `upstream`'s target version
   * (anything at all, for an upstream with no version at the target). Asked only for readers left
   * out of the set.
   */
  readonly consumedPast: (flow: string, upstream: string) => boolean;
}

export interface CascadeMember {
  readonly dataset: string;
  readonly resetCheckpoints: boolean;
  /** False: no table version at the target, so the rewind empties it (step 4). */
  readonly inTarget: boolean;
}

/** The rewound set, upstream first. */
export function planCascade(input: CascadeInput): CascadeMember[] {
  try {
    return membersOf(input);
  } catch (error) {
    if (error instanceof InvalidCascadeConfigurationError)
      throw new InvalidCascadeConfigurationError(error.conflicts, workingSelection(input, error));
    if (error instanceof InconsistentUpstreamCheckpointResetError)
      throw new InconsistentUpstreamCheckpointResetError(error.pairs, workingSelection(input, error));
    throw error;
  }
}

/** Rounds of step 8 (each fixes what the last check refused) before giving up on a suggestion. */
const MAX_FIX_ROUNDS = 8;

/** Step 8: a `datasets` list that passes every rule, or undefined when none was found. */
function workingSelection(
  input: CascadeInput,
  refusal: InvalidCascadeConfigurationError | InconsistentUpstreamCheckpointResetError,
): SuggestedDatasetSpec[] | undefined {
  const { pipeline } = input;
  if (!input.datasets) return undefined;
  const entries = input.datasets.map((spec) => ({
    dataset: datasetName(pipeline, spec.identifier) as string,
    cascade: spec.cascade,
    resetCheckpoints: spec.reset_checkpoints,
  }));
  let error: unknown = refusal;
  for (let round = 0; round < MAX_FIX_ROUNDS; round++) {
    // Who must go back with their checkpoints: the readers that failed, or the datasets whose
    // upstreams disagree. Everything upstream of them in the request resets its checkpoints too.
    const readers =
      error instanceof InvalidCascadeConfigurationError
        ? error.conflicts.map((c) => datasetName(pipeline, c.reader) as string)
        : error instanceof InconsistentUpstreamCheckpointResetError
          ? error.pairs.map((p) => datasetName(pipeline, p.dataset) as string)
          : undefined;
    if (!readers) return undefined;
    for (const reader of readers) {
      const upstreams = new Set(upstreamClosure(pipeline.graph, [reader]));
      for (const entry of entries) if (upstreams.has(entry.dataset)) entry.resetCheckpoints = true;
      const covered = new Set([
        ...entries.map((entry) => entry.dataset),
        ...downstreamClosure(
          pipeline.graph,
          entries.filter((entry) => entry.cascade).map((entry) => entry.dataset),
        ),
      ]);
      if (!covered.has(reader)) entries.push({ dataset: reader, cascade: true, resetCheckpoints: true });
    }
    const datasets = entries.map((entry) => ({
      identifier: qualifiedName(pipeline, entry.dataset),
      cascade: entry.cascade,
      reset_checkpoints: entry.resetCheckpoints,
    }));
    try {
      membersOf({ ...input, datasets });
      return datasets;
    } catch (next) {
      error = next;
    }
  }
  return undefined;
}

function membersOf(input: CascadeInput): CascadeMember[] {
  const { pipeline } = input;
  const specs = input.datasets
    ? resolveIdentifiers(pipeline, input.datasets)
    : tableDatasets(pipeline).map((dataset) => ({ dataset, cascade: true, resetCheckpoints: true }));

  const reset = new Map<string, boolean>();
  for (const spec of specs) {
    if (!spec.cascade) continue;
    for (const name of downstreamClosure(pipeline.graph, [spec.dataset])) {
      if (!reset.has(name)) reset.set(name, spec.resetCheckpoints);
    }
  }
  for (const spec of specs) reset.set(spec.dataset, spec.resetCheckpoints);

  const tables = new Set(tableDatasets(pipeline));
  const members = tableDatasets(pipeline)
    .filter((name) => reset.has(name) && tables.has(name))
    .map((dataset) => ({
      dataset,
      resetCheckpoints: reset.get(dataset) as boolean,
      inTarget: input.inTarget.has(dataset),
    }));

  const kept = members.filter(
    (m) => !m.inTarget && !m.resetCheckpoints && writersOf(pipeline, m.dataset).length > 0,
  );
  if (kept.length > 0)
    throw new DatasetNotInRewindPointError(kept.map((m) => qualifiedName(pipeline, m.dataset)));

  checkResetAgreement(pipeline, members);
  checkExternalSources(pipeline, members);
  checkLeftOutReaders(input, members);
  return members;
}

function resolveIdentifiers(
  pipeline: ValidatedPipeline,
  datasets: readonly RewindDatasetSpec[],
): { dataset: string; cascade: boolean; resetCheckpoints: boolean }[] {
  const unknown: string[] = [];
  const resolved = datasets.flatMap((spec) => {
    const name = datasetName(pipeline, spec.identifier);
    if (name === undefined) {
      unknown.push(spec.identifier);
      return [];
    }
    return [{ dataset: name, cascade: spec.cascade, resetCheckpoints: spec.reset_checkpoints }];
  });
  if (unknown.length > 0) {
    throw new RewindDatasetNotFoundError(
      unknown,
      pipeline.definition.datasets.map((d) => qualifiedName(pipeline, d.name)),
    );
  }
  return resolved;
}

/** `Main.Sales.Orders` or `orders` → `orders` when it is a dataset of this pipeline. */
export function datasetName(pipeline: ValidatedPipeline, identifier: string): string | undefined {
  const parts = identifier.trim().toLowerCase().split(".");
  const { catalog, schema } = pipeline.definition;
  const name =
    parts.length === 3 && parts[0] === catalog && parts[1] === schema
      ? parts[2]
      : parts.length === 1
        ? parts[0]
        : undefined;
  return name !== undefined && datasetOf(pipeline, name) ? name : undefined;
}

function checkResetAgreement(pipeline: ValidatedPipeline, members: readonly CascadeMember[]): void {
  const reset = new Map(members.map((m) => [m.dataset, m.resetCheckpoints]));
  const pairs: { dataset: string; upstream: string }[] = [];
  for (const member of members) {
    for (const upstream of upstreamClosure(pipeline.graph, [member.dataset])) {
      const value = reset.get(upstream);
      if (upstream !== member.dataset && value !== undefined && value !== member.resetCheckpoints) {
        pairs.push({
          dataset: qualifiedName(pipeline, member.dataset),
          upstream: qualifiedName(pipeline, upstream),
        });
      }
    }
  }
  if (pairs.length > 0) throw new InconsistentUpstreamCheckpointResetError(pairs);
}

function checkExternalSources(pipeline: ValidatedPipeline, members: readonly CascadeMember[]): void {
  const refused = members
    .filter((m) => !m.resetCheckpoints)
    .flatMap((m) =>
      writersOf(pipeline, m.dataset).flatMap((flow) => {
        const source = externalSource(flow);
        return source ? [{ dataset: qualifiedName(pipeline, m.dataset), flow: flow.name, source }] : [];
      }),
    );
  if (refused.length > 0) throw new ResetCheckpointsRequiredError(refused);
}

function checkLeftOutReaders(input: CascadeInput, members: readonly CascadeMember[]): void {
  const { pipeline } = input;
  const reset = new Map(members.map((m) => [m.dataset, m.resetCheckpoints]));
  const conflicts: { reader: string; upstream: string; keepsCheckpoint?: true }[] = [];
  for (const upstream of reset.keys()) {
    for (const reader of downstreamOf(pipeline.graph, upstream)) {
      // A reader rewound with its checkpoints goes back with its upstream; one left out, or rewound
      // with reset_checkpoints: false, keeps an offset that may be past the upstream's target.
      if (reset.get(reader) === true) continue;
      for (const flow of writersOf(pipeline, reader)) {
        const source = flow.source;
        const streams =
          (source.type === "stream" && source.dataset === upstream) || flow.join?.stream === upstream;
        if (streams && input.consumedPast(flow.name, upstream)) {
          conflicts.push({
            reader: qualifiedName(pipeline, reader),
            upstream: qualifiedName(pipeline, upstream),
            ...(reset.has(reader) ? { keepsCheckpoint: true as const } : {}),
          });
        }
      }
    }
  }
  if (conflicts.length > 0) throw new InvalidCascadeConfigurationError(conflicts);
}
