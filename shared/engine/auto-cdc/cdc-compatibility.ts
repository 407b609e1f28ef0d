import { loadSnapshot, parseSchema, TableNotFoundError, type StructType } from "../../delta/index.ts";
import type { FlowDefinition, PipelineDefinition } from "../../pipeline/definition-schema.ts";
import type { ValidatedPipeline } from "../../pipeline/validate-pipeline.ts";
import type { Checkpoint, CheckpointsRepository } from "../../store/checkpoints-repository.ts";
import type { ObjectStore } from "../../object-store/object-store.ts";
import { DatasetCatalog } from "../dataset-catalog.ts";
import { previewFlowOutput } from "../flow-preview.ts";
import { Sandbox } from "../sandbox.ts";
import { cdcLayout, storedLayoutOf, type CdcLayout, type StoredCdcLayout } from "./cdc-layout.ts";
import { openCdcState } from "./cdc-state.ts";
import { AutoCdcStateIncompatibleError } from "./errors.ts";

/**
 * Whether an AUTO CDC flow may continue from a per-key state (semantics.md "Replay": a definition
 * not compatible with the restored state is refused, with the way out). The state records the layout
 * its events were applied under (cdc-layout.ts `StoredCdcLayout`); the definition's layout must be
 * the same, else the state's events and the target's rows mean something else than the batch would
 * assume:
 *
 * - other keys, SCD type or sequence_by, or a column no longer written: the table itself no longer
 *   fits (its rows are keyed, versioned or shaped otherwise), so the way out is a full refresh;
 * - a column newly written, other track_history_* columns, another ignore_null_updates: the events
 *   kept do not give the new rows, but the sources still do, so a checkpoint reset of the target's
 *   AUTO CDC flows re-reads them into the table (a full refresh works too).
 *
 * One rule, checked in three places: every batch (before it loads the state), and up front at start
 * and validate_only (from HEAD) and at a rewind and its dry run (from the checkpoint it restores), so
 * a refused change is refused before an update starts. A state without a recorded layout (written
 * before Ebb recorded it) is left to the state store's shape check.
 */
export function checkCdcLayout(
  at: {
    readonly flow: string;
    readonly target: string;
    /** The target's AUTO CDC flows (the ones a checkpoint reset must cover). */
    readonly flows: readonly string[];
    readonly checkpointSeq?: number;
  },
  stored: StoredCdcLayout | undefined,
  layout: CdcLayout,
): void {
  if (!stored) return;
  const { problems, refreshOnly } = layoutDifferences(stored, storedLayoutOf(layout));
  if (problems.length === 0) return;
  const alternatives = `revert the change, or rewind to a point taken under the current definition`;
  const refresh = `fully refresh "${at.target}" (full_refresh_selection: ["${at.target}"])`;
  const wayOut = refreshOnly
    ? `The table no longer fits either: ${refresh}, ${alternatives}`
    : `Reset the checkpoints of the flows into "${at.target}" (reset_checkpoint_selection: [${at.flows.map((f) => `"${f}"`).join(", ")}]) so they re-read their sources into the table, ${refresh}, ${alternatives}`;
  throw new AutoCdcStateIncompatibleError(at.flow, at.target, at.checkpointSeq, problems, wayOut);
}

/** What differs between the stored layout and the wanted one, and whether only a refresh mends it. */
export function layoutDifferences(
  stored: StoredCdcLayout,
  wanted: StoredCdcLayout,
): { problems: string[]; refreshOnly: boolean } {
  const problems: string[] = [];
  let refreshOnly = false;
  const names = (list: readonly string[]) => (list.length > 0 ? list.join(", ") : "none");
  const same = (a: readonly string[], b: readonly string[]) =>
    a.length === b.length && a.every((x, i) => x === b[i]);
  if (stored.scdType !== wanted.scdType) {
    problems.push(
      `it is now stored_as_scd_type ${wanted.scdType}, the state and table are type ${stored.scdType}`,
    );
    refreshOnly = true;
  }
  if (!same([...stored.keys].sort(), [...wanted.keys].sort())) {
    problems.push(`its keys are now (${names(wanted.keys)}), the state is keyed by (${names(stored.keys)})`);
    refreshOnly = true;
  }
  if (!same(stored.sequence, wanted.sequence)) {
    problems.push(
      `its sequence_by is now (${names(wanted.sequence)}), the state was sequenced by (${names(stored.sequence)})`,
    );
    refreshOnly = true;
  }
  if (!same(stored.values, wanted.values)) {
    const dropped = stored.values.filter((c) => !wanted.values.includes(c));
    const added = wanted.values.filter((c) => !stored.values.includes(c));
    const detail = [
      ...(added.length > 0 ? [`${names(added)} newly written`] : []),
      ...(dropped.length > 0 ? [`${names(dropped)} no longer written`] : []),
      ...(added.length + dropped.length === 0 ? ["the same columns in another order"] : []),
    ];
    problems.push(
      `its column_list / except_column_list now write (${names(wanted.values)}), the state holds events of (${names(stored.values)}): ${detail.join(", ")}`,
    );
    if (dropped.length > 0) refreshOnly = true;
  }
  if (stored.scdType === 2 && wanted.scdType === 2 && !same(stored.tracked, wanted.tracked))
    problems.push(
      `its track_history_* columns are now (${names(wanted.tracked)}), the table's history was split on (${names(stored.tracked)})`,
    );
  if (stored.ignoreNullUpdates !== wanted.ignoreNullUpdates)
    problems.push(
      `its ignore_null_updates is now ${wanted.ignoreNullUpdates}, the state was applied with ${stored.ignoreNullUpdates}`,
    );
  return { problems, refreshOnly };
}

/** The AUTO CDC flows writing `target`. */
function cdcFlowsOf(definition: PipelineDefinition, target: string): string[] {
  const dataset = definition.datasets.find((d) => d.name === target);
  return dataset?.type === "streaming_table"
    ? dataset.flows.filter((f) => f.auto_cdc).map((f) => f.name)
    : [];
}

/**
 * The up-front check of AUTO CDC flows about to continue from `checkpoint` (each flow's HEAD at
 * start, the restored checkpoint at a rewind): the flow's layout comes from its output described
 * before the batch (flow-preview.ts), so a flow whose output cannot be described so is left to its
 * batch's check.
 */
export class CdcStateCheck {
  readonly #catalog: DatasetCatalog;
  #sandbox: Sandbox | undefined;

  constructor(
    private readonly pipeline: ValidatedPipeline,
    /** The pipeline's bucket: its tables and the flows' state. */
    private readonly bucket: ObjectStore,
    /**
     * Whether upstream tables are read as they are now (start). A rewind restores them, so its
     * check describes only flows that read no table.
     */
    private readonly readTables: boolean,
  ) {
    this.#catalog = new DatasetCatalog(pipeline, bucket);
  }

  async check(
    pipelineId: string,
    target: string,
    flow: FlowDefinition,
    checkpoint: Checkpoint | undefined,
  ): Promise<void> {
    if (!flow.auto_cdc || !checkpoint?.stateVersion) return;
    const state = await openCdcState(
      { store: this.bucket, pipelineId, flowId: flow.name },
      checkpoint.stateVersion,
    );
    if (!state.meta.layout) return;
    const output = await previewFlowOutput(
      async () => (this.#sandbox ??= await Sandbox.open({ namespace: this.pipeline.definition })),
      this.#catalog,
      target,
      flow,
      (name) => this.tableSchema(name),
    );
    if (!output) return;
    const plan = this.#catalog.flowPlan(flow.name);
    if (plan.kind !== "auto_cdc") return;
    const layout = cdcLayout(
      flow.name,
      plan,
      output.fields.map((f) => f.name),
    );
    checkCdcLayout(
      {
        flow: flow.name,
        target,
        flows: cdcFlowsOf(this.pipeline.definition, target),
        checkpointSeq: checkpoint.seq,
      },
      state.meta.layout,
      layout,
    );
  }

  async close(): Promise<void> {
    await this.#sandbox?.close();
  }

  private async tableSchema(name: string): Promise<StructType | undefined> {
    if (!this.readTables) return undefined;
    try {
      return parseSchema((await loadSnapshot(this.#catalog.tableStore(name))).metadata.schemaString);
    } catch (error) {
      if (error instanceof TableNotFoundError) return undefined;
      throw error;
    }
  }
}

/** The check from HEAD of each AUTO CDC flow among `flows` (those that run and continue). */
export async function checkCdcHeadStates(
  pipeline: ValidatedPipeline,
  bucket: ObjectStore,
  checkpoints: CheckpointsRepository,
  pipelineId: string,
  flows: readonly FlowDefinition[],
): Promise<void> {
  const cdcFlows = flows.filter((flow) => flow.auto_cdc);
  if (cdcFlows.length === 0) return;
  const check = new CdcStateCheck(pipeline, bucket, true);
  try {
    for (const flow of cdcFlows) {
      const target = pipeline.definition.datasets.find(
        (d) => d.type === "streaming_table" && d.flows.includes(flow),
      );
      if (!target) continue;
      const head = await checkpoints.head({ pipelineId, flowId: flow.name });
      await check.check(pipelineId, target.name, flow, head.checkpoint);
    }
  } finally {
    await check.close();
  }
}
