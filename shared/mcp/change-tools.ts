import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { z } from "zod";
import type { EbbClient } from "../client/ebb-client.ts";
import { previewRewind, RewindPreviewError, type RewindPreview } from "../client/rewind-preview.ts";
import { markdownTable } from "./markdown.ts";
import type { RewindPlans } from "./rewind-plans.ts";
import { answer, refusal, refusingAsTheApi } from "./tool-answers.ts";

/**
 * The tools that change things, with the web UI's guard rails: a rewind runs only a plan shown in
 * this session (`plan_rewind`, a dry run that changes no data) and only with `confirm: true`; a full
 * refresh, a vacuum and a delete need `confirm: true` too. The API checks everything again.
 */

const pipelineId = z.string().min(1).describe("the pipeline's id");
const confirm = z
  .boolean()
  .optional()
  .describe("true once the person has seen what this does and said to go ahead");

/** MCP-side refusals: the guard rails before any call of the API. */
export const REFUSALS = {
  notPlanned: "REWIND_NOT_PLANNED",
  notConfirmed: "CONFIRMATION_REQUIRED",
} as const;

export function registerChangeTools(server: McpServer, client: EbbClient, plans: RewindPlans): void {
  server.registerTool(
    "plan_rewind",
    {
      title: "Plan a rewind (dry run)",
      description:
        "Rehearses a rewind without changing any data: which tables go back to which version, which flows move back to which checkpoint, what cascades downstream, and the rows the rewind takes back from each table (from its change feed). Give a rewind point (list_rewind_points, find_onset) or a timestamp. Answers a plan_id; show the plan to the person before calling rewind with it.",
      inputSchema: {
        pipeline_id: pipelineId,
        rewind_point_id: z.string().optional().describe("the point to rewind to"),
        rewind_timestamp: z
          .string()
          .optional()
          .describe("or a time: ISO-8601 with a zone; the newest point at or before it is used"),
        datasets: z
          .array(
            z.object({
              identifier: z.string().min(1).describe("catalog.schema.table"),
              cascade: z.boolean().optional().describe("also rewind what reads it (default true)"),
              reset_checkpoints: z
                .boolean()
                .optional()
                .describe("move the flows back too, so the replay reprocesses (default true)"),
            }),
          )
          .optional()
          .describe("rewind only these datasets (default: all)"),
      },
      annotations: {
        readOnlyHint: false,
        destructiveHint: false,
        idempotentHint: true,
        openWorldHint: false,
      },
    },
    ({ pipeline_id, ...spec }) =>
      refusingAsTheApi(async () => {
        const { datasets } = await client.datasets(pipeline_id);
        let preview: RewindPreview;
        try {
          preview = await previewRewind(client, pipeline_id, spec, datasets);
        } catch (error) {
          if (!(error instanceof RewindPreviewError)) throw error;
          const code = error.update.error?.error_code ?? "REWIND_REFUSED";
          return refusal(code, `the rewind would be refused: ${error.message}`);
        }
        const plan = plans.add(pipeline_id, spec, preview);
        return answer(describePlan(plan.planId, spec, preview), {
          plan_id: plan.planId,
          pipeline_id,
          rewind_spec: spec,
          dry_run_update_id: preview.dryRunUpdateId,
          datasets: preview.datasets,
        });
      }),
  );

  server.registerTool(
    "rewind",
    {
      title: "Rewind a pipeline",
      description:
        "Runs a rewind planned in this session by plan_rewind, exactly as planned: restores the tables (a RESTORE commit each) and moves the flows back. Needs confirm: true, given only after the person has seen the plan. Afterwards, start_update replays.",
      inputSchema: {
        plan_id: z.string().min(1).describe("the plan_id plan_rewind answered"),
        confirm,
      },
      annotations: {
        readOnlyHint: false,
        destructiveHint: true,
        idempotentHint: false,
        openWorldHint: false,
      },
    },
    ({ plan_id, confirm: confirmed }) =>
      refusingAsTheApi(async () => {
        const plan = plans.get(plan_id);
        if (!plan)
          return refusal(
            REFUSALS.notPlanned,
            `no plan ${plan_id} in this session: call plan_rewind first, show its plan, and rewind with the plan_id it answers (a plan runs once)`,
          );
        if (confirmed !== true)
          return refusal(
            REFUSALS.notConfirmed,
            `rewinding pipeline ${plan.pipelineId} restores ${plan.preview.datasets.length} table(s): show the plan to the person and call rewind again with confirm: true once they agree`,
          );
        plans.spend(plan_id);
        const { update_id } = await client.startUpdate(plan.pipelineId, {
          cause: "USER_ACTION",
          rewind_spec: { ...plan.spec, dry_run: false },
        });
        const update = await client.waitForUpdate(plan.pipelineId, update_id, { intervalMs: 300 });
        if (update.state !== "COMPLETED")
          return refusal(
            update.error?.error_code ?? `REWIND_${update.state}`,
            `the rewind (update ${update_id}) ended ${update.state}: ${update.error?.message ?? "see list_events"}`,
          );
        return answer(
          `Rewound pipeline ${plan.pipelineId} (update ${update_id}): ${plan.preview.datasets
            .map(
              (d) => `${d.identifier} ${d.targetVersion < 0 ? "emptied" : `to version ${d.targetVersion}`}`,
            )
            .join(", ")}. Replay with start_update.`,
          { update },
        );
      }),
  );

  server.registerTool(
    "start_update",
    {
      title: "Start an update (the replay)",
      description:
        "Starts an incremental update: after a rewind this is the replay, which reprocesses only what came after the point. validate_only checks the definition without running. Answers the update_id; get_update follows it.",
      inputSchema: {
        pipeline_id: pipelineId,
        validate_only: z.boolean().optional().describe("plan and validate only"),
      },
      annotations: {
        readOnlyHint: false,
        destructiveHint: false,
        idempotentHint: false,
        openWorldHint: false,
      },
    },
    ({ pipeline_id, validate_only }) =>
      refusingAsTheApi(async () => {
        const started = await client.startUpdate(pipeline_id, {
          cause: "API_CALL",
          ...(validate_only ? { validate_only } : {}),
        });
        return answer(
          `Started update ${started.update_id} of pipeline ${pipeline_id}; follow it with get_update (wait_seconds to wait).`,
          started,
        );
      }),
  );

  server.registerTool(
    "refresh_datasets",
    {
      title: "Full refresh or reset",
      description:
        "Refreshes datasets FULL (their tables emptied and rebuilt from all source data) or RESETs them (checkpoints cleared), or resets chosen flows' checkpoints only. Destructive: needs confirm: true.",
      inputSchema: {
        pipeline_id: pipelineId,
        refresh: z.enum(["FULL", "RESET"]).optional().describe("FULL (default) or RESET"),
        selection: z.array(z.string().min(1)).optional().describe("datasets or flows (default: all)"),
        reset_checkpoint_selection: z
          .array(z.string().min(1))
          .optional()
          .describe("reset only these flows' checkpoints, table contents kept"),
        confirm,
      },
      annotations: {
        readOnlyHint: false,
        destructiveHint: true,
        idempotentHint: false,
        openWorldHint: false,
      },
    },
    ({ pipeline_id, refresh, selection, reset_checkpoint_selection, confirm: confirmed }) =>
      refusingAsTheApi(async () => {
        const what = reset_checkpoint_selection
          ? `resets the checkpoints of ${reset_checkpoint_selection.join(", ")}`
          : `refreshes ${selection?.join(", ") ?? "every dataset"} ${refresh ?? "FULL"}`;
        if (confirmed !== true)
          return refusal(
            REFUSALS.notConfirmed,
            `this ${what} of pipeline ${pipeline_id}: call again with confirm: true once the person agrees`,
          );
        const started = await client.startUpdate(pipeline_id, {
          cause: "API_CALL",
          ...(reset_checkpoint_selection
            ? { reset_checkpoint_selection }
            : { refresh: refresh ?? "FULL", ...(selection ? { selection } : {}) }),
        });
        return answer(`Started update ${started.update_id}, which ${what}.`, started);
      }),
  );

  server.registerTool(
    "vacuum_table",
    {
      title: "VACUUM a table",
      description:
        "Deletes data files no version within the retention (and no live rewind point) needs. dry_run lists them. Destructive unless dry_run: needs confirm: true.",
      inputSchema: {
        table: z.string().min(1).describe("catalog.schema.table"),
        retain_hours: z.number().min(0).optional(),
        dry_run: z.boolean().optional(),
        confirm,
      },
      annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
    },
    ({ table, confirm: confirmed, ...body }) =>
      refusingAsTheApi(async () => {
        if (body.dry_run !== true && confirmed !== true)
          return refusal(
            REFUSALS.notConfirmed,
            `VACUUM deletes ${table}'s unneeded files for good: run with dry_run: true to list them, then with confirm: true once the person agrees`,
          );
        const result = await client.vacuum(table, body);
        return answer(
          `${result.dry_run ? "Would delete" : "Deleted"} ${result.files.length} file(s) of ${table} (retention ${result.retention_hours} h; ${result.files_protected} protected by rewind points).`,
          result,
        );
      }),
  );

  server.registerTool(
    "delete_pipeline",
    {
      title: "Delete a pipeline",
      description:
        "Deletes a pipeline; with purge its tables' files go too. Destructive: needs confirm: true.",
      inputSchema: { pipeline_id: pipelineId, purge: z.boolean().optional(), confirm },
      annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
    },
    ({ pipeline_id, purge, confirm: confirmed }) =>
      refusingAsTheApi(async () => {
        if (confirmed !== true)
          return refusal(
            REFUSALS.notConfirmed,
            `deleting pipeline ${pipeline_id}${purge ? " and its tables' files" : ""} cannot be undone: call again with confirm: true once the person agrees`,
          );
        await client.deletePipeline(pipeline_id, purge ?? false);
        return answer(`Deleted pipeline ${pipeline_id}${purge ? " and its tables" : ""}.`);
      }),
  );
}

function describePlan(
  planId: string,
  spec: { rewind_point_id?: string; rewind_timestamp?: string; datasets?: readonly { identifier: string }[] },
  preview: RewindPreview,
): string {
  const chosen = new Set(spec.datasets?.map((d) => d.identifier));
  const target = spec.rewind_point_id ? `point ${spec.rewind_point_id}` : `time ${spec.rewind_timestamp}`;
  const rows = preview.datasets.map((d) => ({
    dataset: d.identifier,
    why:
      spec.datasets === undefined
        ? "all datasets"
        : chosen.has(d.identifier)
          ? "chosen"
          : "cascade (reads a rewound table)",
    version_now: d.versionNow ?? "not written",
    after_rewind: d.targetVersion < 0 ? "emptied (not in the point)" : d.targetVersion,
    rows_taken_back: `${d.undo.inserted} inserted, ${d.undo.updated} updated, ${d.undo.deleted} deleted${d.undo.partial ? " (at least)" : ""}`,
    flows_back_to: d.flows.map((f) => `${f.flow}@${f.seq}`).join(", "),
  }));
  return [
    `Plan ${planId}: a rewind to ${target} (dry run ${preview.dryRunUpdateId}; nothing changed).`,
    "",
    markdownTable(rows),
    "",
    preview.datasets.length === 0
      ? "Nothing to rewind: every table already is at the point."
      : "To go ahead, show this to the person; once they agree, call rewind with this plan_id and confirm: true. Then start_update replays.",
  ].join("\n");
}
