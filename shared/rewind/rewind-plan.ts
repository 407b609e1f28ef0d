import { consumedVersionOf } from "./checkpoint-offsets.ts";
import { RewindNotEnabledError, type MissingPiece } from "./errors.ts";
import { lastResets, refusedAsBeforeFullRefresh } from "./full-refresh-record.ts";
import type { StateDefinitionDrift } from "../engine/stateful/state-definition.ts";
import { downstreamClosure } from "../pipeline/pipeline-graph.ts";
import { allFlows, datasetOf, qualifiedName } from "./pipeline-datasets.ts";
import { planCascade } from "./rewind-cascade.ts";
import { checkFlows, checkTable, throwIfMissing, type FlowCheck } from "./rewind-checks.ts";
import { flowRef, type RewindEnvironment } from "./rewind-environment.ts";
import type { NotInPointMode, RewindSpec } from "./rewind-spec.ts";
import { resolveTarget, type ResolvedTarget } from "./rewind-target.ts";
import { withTableSnapshots, type TableSnapshots } from "./table-snapshots.ts";

/**
 * Planning a rewind: every check of semantics.md "Rewind request", in the order that names the most
 * useful error first, and nothing written. A dry run is exactly this plan (plus its summary event).
 *
 * 0. Rewind must be enabled on the pipeline (`pipelines.rewind.enabled`).
 * 1. Resolve the target to a cut (`rewind-target.ts`).
 * 2. Read every streaming reader's HEAD, to know who has consumed past the target.
 * 3. The rewound set and its rules (`rewind-cascade.ts`).
 * 4. `REWIND_BEFORE_FULL_REFRESH`: a reset recorded after the target, or a table whose identity
 *    changed since (dropped and recreated).
 * 5. Storage checks: table versions and files, checkpoints and state, source data, compatibility.
 *    A dataset with no version at the target has nothing to check: it is emptied (TRUNCATE or DROP,
 *    `not_in_point_mode`), its flows back to the root, so the replay reads their sources from the
 *    start (a stream of a rewound upstream passes over its abandoned versions, as any reader does).
 */

export interface DatasetRewind {
  readonly dataset: string;
  readonly identifier: string;
  /**
   * RESTORE to `targetVersion`; or, for a dataset with no table version at the target, empty it as
   * the spec's `not_in_point_mode` says (TRUNCATE: one commit removing every file; DROP: the table
   * deleted), its flows back to the root.
   */
  readonly action: "RESTORE" | NotInPointMode;
  /** RESTORE only. */
  readonly targetVersion?: number;
  readonly resetCheckpoints: boolean;
  /** RESTORE only: the table's version when its target's files were found (not checked again). */
  readonly checkedVersion?: number;
  /** The writing flows whose HEAD moves (empty without reset_checkpoints). */
  readonly flows: readonly FlowCheck[];
}

export interface RewindPlan {
  readonly resolved: ResolvedTarget;
  readonly dryRun: boolean;
  /** Upstream first. */
  readonly datasets: readonly DatasetRewind[];
  /**
   * The views that read the rewound datasets (`catalog.schema.name`): they store nothing, so
   * nothing is restored; read after the rewind, they compute from the rewound tables.
   */
  readonly views: readonly string[];
  /** Restored operator states built under another definition of their flow (allowed; said). */
  readonly stateDrift: readonly StateDefinitionDrift[];
}

export async function planRewind(env: RewindEnvironment, spec: RewindSpec): Promise<RewindPlan> {
  if (!env.pipeline.settings.rewindEnabled) throw new RewindNotEnabledError();
  return withTableSnapshots(env.tableStore, (snapshots) => planWith(env, snapshots, spec));
}

async function planWith(
  env: RewindEnvironment,
  snapshots: TableSnapshots,
  spec: RewindSpec,
): Promise<RewindPlan> {
  const resolved = await resolveTarget(env, spec.target, snapshots);
  const { cut } = resolved;

  // Per flow and upstream it streams (a stream-stream join streams two).
  const consumed = new Map<string, number>();
  for (const { flow } of allFlows(env.pipeline)) {
    const upstreams = [
      ...(flow.source.type === "stream" ? [flow.source.dataset] : []),
      ...(flow.join ? [flow.join.stream] : []),
    ];
    if (upstreams.length === 0) continue;
    const head = (await env.checkpoints.head(flowRef(env, flow.name))).checkpoint;
    for (const upstream of upstreams)
      consumed.set(`${flow.name}/${upstream}`, consumedVersionOf(flow, upstream, head));
  }
  const resets = await lastResets(env);
  const members = planCascade({
    pipeline: env.pipeline,
    ...(spec.datasets ? { datasets: spec.datasets } : {}),
    inTarget: new Set(cut.datasets.keys()),
    // An upstream with no version at the target is emptied: any row read of it is past the target.
    consumedPast: (flow, upstream) =>
      (consumed.get(`${flow}/${upstream}`) ?? -1) > (cut.datasets.get(upstream)?.version ?? -1),
  });

  const beforeRefresh = await refusedAsBeforeFullRefresh(
    env,
    snapshots,
    cut,
    members.map((m) => m.dataset),
    resets,
  );
  if (beforeRefresh) throw beforeRefresh;

  const rewound = new Set(members.map((m) => m.dataset));
  const tables: MissingPiece[] = [];
  const missing = { checkpoints: [] as MissingPiece[], sources: [] as MissingPiece[] };
  const datasets: DatasetRewind[] = [];
  const stateDrift: StateDefinitionDrift[] = [];
  for (const member of members) {
    const identifier = qualifiedName(env.pipeline, member.dataset);
    // An emptied dataset's flows start again from the root, whatever the cut says of them.
    const targetSeqs = member.inTarget ? cut.flows : new Map<string, number>();
    const flows = member.resetCheckpoints
      ? await checkFlows(
          env,
          member.dataset,
          targetSeqs,
          missing,
          async (upstream) =>
            rewound.has(upstream)
              ? cut.datasets.get(upstream)?.tableId || undefined
              : (await snapshots.latest(upstream))?.metadata.id,
          stateDrift,
        )
      : [];
    const common = { dataset: member.dataset, identifier, resetCheckpoints: member.resetCheckpoints, flows };
    if (!member.inTarget) {
      datasets.push({ ...common, action: spec.notInPointMode });
      continue;
    }
    const targetVersion = cut.datasets.get(member.dataset)!.version;
    const table = await checkTable(env, snapshots, member.dataset, targetVersion, tables);
    if (!table) continue;
    datasets.push({ ...common, action: "RESTORE", targetVersion, checkedVersion: table.currentVersion });
  }
  throwIfMissing(tables, missing.checkpoints, missing.sources);
  const views = downstreamClosure(
    env.pipeline.graph,
    members.map((m) => m.dataset),
  ).filter((name) => datasetOf(env.pipeline, name)?.type === "view");
  return {
    resolved,
    dryRun: spec.dryRun,
    datasets,
    views: views.map((name) => qualifiedName(env.pipeline, name)),
    stateDrift,
  };
}
