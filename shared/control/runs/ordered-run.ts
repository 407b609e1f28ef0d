import { randomUUID } from "node:crypto";
import type { OrderedRunBody } from "../../api/request-schemas.ts";
import { CodedError } from "../../errors/coded-error.ts";
import { crossReads, dependencyOrder, PipelineCycleError } from "../../rewind/cuts/index.ts";
import { tableDatasets } from "../../rewind/pipeline-datasets.ts";
import { checkUpdateAllowed } from "../../rewind/update-guard.ts";
import { loadPipeline, requirePipeline, type ControlPlane } from "../plane/control-plane.ts";
import { pipelineTables } from "../rewinds/pipeline-tables.ts";
import { runOfOrderedRun } from "../updates/steps/ordered-run-handover.ts";
import { startUpdate } from "../updates/start-update.ts";
import { OrderedRunCycleError, OrderedRunRefusedError } from "./errors.ts";

/**
 * An ordered run (`POST /api/2.0/ebb/runs`, docs/rewind-across-pipelines.md "Replaying in order"):
 * several pipelines that read each other's tables run one after another, upstreams first, so each
 * downstream pipeline reads what its upstreams just wrote — the replay after a cut across pipelines.
 *
 * 1. Order the pipelines by their reads (the graph the cut uses: rewind/cuts); a circle is refused.
 * 2. Each must be able to start now (not busy, not blocked by an incomplete rewind): one refusal
 *    refuses the whole request, naming the pipeline; nothing starts.
 * 3. Unless dry_run, the first pipeline's update starts; its intent carries the pipelines after it.
 *    Each run's FinishUpdate starts the next (continueOrderedRun), so no function waits on another
 *    pipeline. A run that fails ends the ordered run: its event log names the pipelines not run.
 */
export async function startOrderedRun(plane: ControlPlane, body: OrderedRunBody) {
  const names = new Map<string, string>();
  const tables = [];
  for (const id of body.pipeline_ids) {
    const record = await requirePipeline(plane, id);
    const { pipeline } = await loadPipeline(plane, id);
    names.set(id, pipeline.definition.name);
    tables.push(pipelineTables(id, pipeline));
    try {
      // A full refresh resets every table again: the way out of a refresh stopped part-way.
      const resets = body.full_refresh ? tableDatasets(pipeline) : [];
      checkUpdateAllowed(record, pipeline.settings, "other", resets);
    } catch (error) {
      if (error instanceof CodedError) throw new OrderedRunRefusedError(pipeline.definition.name, id, error);
      throw error;
    }
  }
  const reads = crossReads(tables);
  const order = orderOf(body.pipeline_ids, reads, names);
  const requestId = randomUUID();
  let updateId: string | undefined;
  if (!body.dry_run) {
    const [first, ...next] = order;
    const step = { requestId, position: 1, of: order.length, next, fullRefresh: body.full_refresh };
    ({ update_id: updateId } = await startUpdate(plane, first!, runOfOrderedRun(step), { orderedRun: step }));
  }
  return {
    request_id: requestId,
    dry_run: body.dry_run,
    pipelines: order.map((id, index) => ({
      pipeline_id: id,
      name: names.get(id) ?? id,
      position: index + 1,
      reads: reads
        .filter((read) => read.reader === id)
        .map((read) => ({ pipeline_id: read.upstream, dataset: read.dataset, flow: read.flow })),
      ...(index === 0 && updateId ? { update_id: updateId } : {}),
    })),
  };
}

function orderOf(
  ids: readonly string[],
  reads: Parameters<typeof dependencyOrder>[1],
  names: ReadonlyMap<string, string>,
): string[] {
  try {
    return dependencyOrder(ids, reads);
  } catch (error) {
    if (error instanceof PipelineCycleError)
      throw new OrderedRunCycleError(error.pipelines.map((id) => names.get(id) ?? id));
    throw error;
  }
}
