import type { ResetMode } from "../pipeline/definition-schema.ts";
import { downstreamOf, inRunOrder } from "../pipeline/pipeline-graph.ts";
import { selectByName, type FlowRef } from "../pipeline/selection.ts";
import type { ValidatedPipeline } from "../pipeline/validate-pipeline.ts";
import { datasetOf, writersOf } from "./pipeline-datasets.ts";
import type { RefreshRequest } from "./refresh-request.ts";
import { InvalidParameterError } from "../errors/coded-error.ts";

/**
 * Planning a run's refresh and reset work (semantics.md "Refresh and reset"). Pure: the plan says
 * what to delete and which HEADs go back to the root; `executeRefreshPlan` does it.
 *
 * 1. Resolve the refresh selection (datasets or flows; case-insensitive; none = all).
 * 2. Per selected dataset (a whole dataset, or a single-writer table reached through its flow):
 *    reset its table by the override, else its own `reset_mode` (a view stores nothing; TRUNCATE as an
 *    override falls back to DROP there, with a warning), and put every writing flow back to the root.
 * 3. Per flow selected alone in a table written by several flows (a shared sink): delete only the rows
 *    its `owns` predicate selects and reset only its checkpoint. RESET with an override resets the
 *    whole table and all its writers; FULL with an override is refused (a full refresh never deletes
 *    other writers' rows); a writer without `owns` cannot be refreshed alone.
 * 4. Checkpoint resets: flows get a fresh root and keep their table; an append flow without a
 *    starting option warns that it re-appends what the table holds.
 * 5. What runs: nothing for RESET; otherwise the refreshed and incrementally selected datasets, or all.
 * 6. A streaming reader of a reset dataset that is not reset itself will fail on its next batch:
 *    warn, naming it (the engine refuses the batch with the same advice).
 */

export type TableReset =
  | { readonly how: "DROP" | "TRUNCATE" }
  | {
      readonly how: "OWNED_ROWS";
      readonly predicates: readonly { readonly flow: string; readonly owns: string }[];
    }
  /** A view: nothing stored, nothing to delete. */
  | { readonly how: "NONE" };

export interface DatasetResetPlan {
  readonly dataset: string;
  readonly reset: TableReset;
  /** Flows whose HEAD goes back to the root. */
  readonly flows: readonly string[];
}

export interface RefreshPlan {
  readonly mode: "INCREMENTAL" | "FULL" | "RESET";
  /** Upstream first. */
  readonly resets: readonly DatasetResetPlan[];
  readonly checkpointResets: readonly FlowRef[];
  /** Datasets the run then processes, in run order (empty for RESET). */
  readonly run: readonly string[];
  /** Flows the run processes (within `run`); undefined: every flow of those datasets. */
  readonly runFlows?: readonly string[];
  /** Warning events to record, one per message. */
  readonly warnings: readonly string[];
}

export function planRefresh(pipeline: ValidatedPipeline, request: RefreshRequest): RefreshPlan {
  const warnings: string[] = [];
  const resets = request.reset ? planResets(pipeline, request, warnings) : [];
  const checkpointResets = request.checkpointReset
    ? selectByName(pipeline, request.checkpointReset, "reset_checkpoint_selection").flows
    : [];
  for (const ref of checkpointResets) {
    const flow = writersOf(pipeline, ref.dataset).find((f) => f.name === ref.flow);
    if (
      flow &&
      flow.options?.starting_version === undefined &&
      flow.options?.starting_timestamp === undefined
    ) {
      warnings.push(
        `flow ${ref.flow} gets a fresh checkpoint and reads its source from the start while ${ref.dataset} keeps its rows: an append flow writes those rows again; set starting_version or starting_timestamp on the flow, or fully refresh ${ref.dataset} instead`,
      );
    }
  }

  const mode = request.reset?.mode ?? "INCREMENTAL";
  let run: string[] = [];
  let runFlows: string[] | undefined;
  if (mode !== "RESET") {
    if (!request.onlySelected) {
      run = inRunOrder(pipeline.graph, pipeline.graph.datasets);
    } else {
      const names = [...(request.reset?.names ?? []), ...(request.incremental ?? [])];
      // The reset names passed planResets: an unknown name here is one of `incremental`'s.
      const selected = selectByName(pipeline, names, request.incrementalField);
      const partial = selected.flows.filter((ref) => !selected.datasets.includes(ref.dataset));
      run = inRunOrder(pipeline.graph, [...selected.datasets, ...partial.map((ref) => ref.dataset)]);
      if (partial.length > 0) {
        runFlows = selected.flows.map((ref) => ref.flow);
      }
    }
  }

  const reset = new Set(resets.filter((r) => r.reset.how !== "NONE").map((r) => r.dataset));
  for (const dataset of reset) {
    for (const reader of downstreamOf(pipeline.graph, dataset)) {
      if (reset.has(reader)) continue;
      const streams = writersOf(pipeline, reader).some(
        (f) => (f.source.type === "stream" && f.source.dataset === dataset) || f.join?.stream === dataset,
      );
      if (streams) {
        warnings.push(
          `${reader} reads ${dataset} as a stream and is not refreshed with it: its next batch will fail; fully refresh ${reader} too`,
        );
      }
    }
  }
  return { mode, resets, checkpointResets, run, ...(runFlows ? { runFlows } : {}), warnings };
}

function planResets(
  pipeline: ValidatedPipeline,
  request: RefreshRequest,
  warnings: string[],
): DatasetResetPlan[] {
  const mode = request.reset!.mode;
  const override = request.resetModeOverride;
  const selected = selectByName(pipeline, request.reset!.names, request.reset!.field);
  const plans = new Map<string, DatasetResetPlan>();

  for (const dataset of selected.datasets)
    plans.set(dataset, wholeDataset(pipeline, dataset, override, warnings));

  const alone = selected.flows.filter((ref) => !selected.datasets.includes(ref.dataset));
  const byDataset = new Map<string, string[]>();
  for (const ref of alone) byDataset.set(ref.dataset, [...(byDataset.get(ref.dataset) ?? []), ref.flow]);
  for (const [dataset, flows] of byDataset) {
    const writers = writersOf(pipeline, dataset);
    if (writers.length === flows.length) {
      plans.set(dataset, wholeDataset(pipeline, dataset, override, warnings));
      continue;
    }
    if (override !== undefined && mode === "FULL") {
      throw new InvalidParameterError(
        `reset_mode ${override} with refresh FULL of flow ${flows.join(", ")} would reset all of ${dataset}, which other flows write too: a full refresh never deletes other writers' rows; leave reset_mode out (only the flow's own rows are deleted), or use refresh RESET with the override`,
      );
    }
    if (override !== undefined) {
      plans.set(dataset, { dataset, reset: { how: override }, flows: writers.map((f) => f.name) });
      continue;
    }
    const predicates = flows.map((name) => {
      const owns = writers.find((f) => f.name === name)?.owns;
      if (owns === undefined) {
        throw new InvalidParameterError(
          `flow ${name} shares ${dataset} with other flows but declares no owns predicate, so its rows cannot be told apart: declare owns on the flow, or refresh the whole dataset ${dataset}`,
        );
      }
      return { flow: name, owns };
    });
    plans.set(dataset, { dataset, reset: { how: "OWNED_ROWS", predicates }, flows });
  }
  return inRunOrder(pipeline.graph, plans.keys()).map((dataset) => plans.get(dataset)!);
}

function wholeDataset(
  pipeline: ValidatedPipeline,
  dataset: string,
  override: ResetMode | undefined,
  warnings: string[],
): DatasetResetPlan {
  const definition = datasetOf(pipeline, dataset)!;
  if (definition.type === "view") {
    if (override === "TRUNCATE") {
      warnings.push(
        `reset_mode TRUNCATE does not apply to the view ${dataset} (it stores no rows): it falls back to DROP`,
      );
    }
    return { dataset, reset: { how: "NONE" }, flows: [] };
  }
  return {
    dataset,
    reset: { how: override ?? definition.reset_mode },
    flows: writersOf(pipeline, dataset).map((f) => f.name),
  };
}
