import type { Command } from "commander";
import type { EbbClient, UpdateInfo } from "../client/ebb-client.ts";
import { EXIT } from "./exit-codes.ts";
import type { Out } from "./pipeline-commands.ts";

/**
 * `ebb run --pipelines a,b,c`: several pipelines run one after another, upstreams first
 * (POST /api/2.0/ebb/runs, docs/rewind-across-pipelines.md "Replaying in order"). Ebb starts each
 * run as the one before completes; the CLI only follows them, and a run that does not complete is
 * exit code 4.
 */

export interface OrderedRunOptions {
  readonly wait: boolean;
  readonly fullRefresh?: boolean;
  readonly dryRun?: boolean;
  readonly json?: boolean;
}

interface OrderedRunAnswer {
  readonly request_id: string;
  readonly dry_run: boolean;
  readonly pipelines: readonly {
    readonly pipeline_id: string;
    readonly name: string;
    readonly position: number;
    readonly update_id?: string;
  }[];
}

/** How long a run may take to appear after the one before completed (FinishUpdate starts it). */
const NEXT_RUN_WAIT_MS = 60_000;

export async function runInOrder(
  client: EbbClient,
  pipelineIds: readonly string[],
  options: OrderedRunOptions,
  out: Out,
  command: Command,
): Promise<void> {
  const answer = await client.request<OrderedRunAnswer>("POST", "/api/2.0/ebb/runs", {
    body: {
      pipeline_ids: pipelineIds,
      full_refresh: options.fullRefresh === true,
      dry_run: options.dryRun === true,
    },
  });
  const of = answer.pipelines.length;
  if (options.json && (answer.dry_run || !options.wait)) return out(`${JSON.stringify(answer, null, 2)}\n`);
  if (!options.json)
    for (const step of answer.pipelines) out(`${step.position}/${of} ${step.name} (${step.pipeline_id})\n`);
  if (answer.dry_run || !options.wait) {
    if (!options.json && !answer.dry_run) out(`ordered run ${answer.request_id} started\n`);
    return;
  }
  const ended: UpdateInfo[] = [];
  for (const step of answer.pipelines) {
    const updateId = step.update_id ?? (await startedRun(client, step.pipeline_id, answer.request_id));
    if (updateId === undefined)
      command.error(
        `${step.name}'s run did not start: see the events of ${answer.pipelines[step.position - 2]?.name ?? "the run before"} (ebb events <pipeline-id>)`,
        { exitCode: EXIT.updateFailed },
      );
    const update = await client.waitForUpdate(step.pipeline_id, updateId, { intervalMs: 500 });
    ended.push(update);
    if (!options.json) out(`${step.position}/${of} ${step.name} ${update.state}\n`);
    if (update.state !== "COMPLETED") {
      if (options.json) out(`${JSON.stringify({ ...answer, updates: ended }, null, 2)}\n`);
      else if (update.error) out(`error ${update.error.error_code}: ${update.error.message}\n`);
      command.error(`the ordered run ends at ${step.name}: its update ${updateId} ended ${update.state}`, {
        exitCode: EXIT.updateFailed,
      });
    }
  }
  if (options.json) out(`${JSON.stringify({ ...answer, updates: ended }, null, 2)}\n`);
}

/** The update the ordered run started on `pipelineId`, once it appears. */
async function startedRun(
  client: EbbClient,
  pipelineId: string,
  requestId: string,
): Promise<string | undefined> {
  const until = Date.now() + NEXT_RUN_WAIT_MS;
  while (Date.now() < until) {
    const { updates } = await client.listUpdates(pipelineId, { max_results: 5 });
    const started = updates.find((u) => u.ordered_run?.request_id === requestId);
    if (started) return started.update_id;
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  return undefined;
}
