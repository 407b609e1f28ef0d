import { z } from "zod";
import type { FlowStateQuery } from "../../api/request-schemas.ts";
import { quoteIdentifier } from "../../duck/sql-text.ts";
import { Sandbox } from "../../engine/sandbox.ts";
import { isStatefulFlow } from "../../engine/stateful/stateful-batch.ts";
import { describeWatermark, watermarkMetaSchema } from "../../engine/stateful/watermark.ts";
import { WINDOWS_TABLE } from "../../engine/stateful/window-aggregation.ts";
import { windowStateRows, type NamedStateRows } from "../../engine/stateful/window-state-rows.ts";
import { joinStateRows } from "../../engine/stateful/join-state-rows.ts";
import { JOIN_LEFT_TABLE, JOIN_RIGHT_TABLE } from "../../engine/stateful/stream-join.ts";
import { InvalidParameterError } from "../../errors/coded-error.ts";
import type { FlowDefinition } from "../../pipeline/definition-schema.ts";
import { allFlows } from "../../rewind/pipeline-datasets.ts";
import { findRewindPoint } from "../../rewind/rewind-points.ts";
import {
  CheckpointNotFoundError,
  FlowNotFoundError,
  FlowWithoutStateError,
  isFlowStateKey,
  openStateVersion,
  type StateFlow,
  type StateTable,
} from "../../state/index.ts";
import { ROOT_SEQ } from "../../store/checkpoints-repository.ts";
import { toJsonRows } from "../tables/json-values.ts";
import { loadPipeline, rewindEnvironment, type ControlPlane } from "../plane/control-plane.ts";

/**
 * `GET /api/2.0/pipelines/{id}/flows/{flow}/state` (the state reader): a flow's operator state as
 * rows, at HEAD, at a committed checkpoint, or at a rewind point — the state a rewind to the point
 * restores, which is the state version of the checkpoint the point names for the flow (the empty
 * state at the root). Spark's state reader, per rewind point.
 *
 * 1. Where: the page token's state version; else the checkpoint HEAD, `checkpoint_seq` or the point
 *    names, and the state version that checkpoint names.
 * 2. Open that version (its manifest): tables, row counts, watermark. Versions never change, so the
 *    pages of one listing stay consistent while the flow runs on.
 * 3. The page: rows of every state table, by table name then key, as `{table, key, value}`; only the
 *    tables the page covers are read. A windowed aggregation's rows and columns carry the names of
 *    the flow's SQL (window-state-rows.ts), a join's `batch`, `row` and `matched`
 *    (join-state-rows.ts), not the engine's own.
 */

const DEFAULT_PAGE = 1000;

/** Where the listing reads, as its page token carries it. */
const tokenSchema = z.object({
  /** The state version's manifest key; null for the empty state. */
  v: z.string().nullable(),
  s: z.number().int().nonnegative(),
  o: z.number().int().nonnegative(),
  p: z.string().optional(),
});
type Token = z.infer<typeof tokenSchema>;

function encodeToken(token: Token): string {
  return Buffer.from(JSON.stringify(token)).toString("base64url");
}

function decodeToken(flow: StateFlow, text: string): Token {
  try {
    const parsed = tokenSchema.safeParse(JSON.parse(Buffer.from(text, "base64url").toString("utf8")));
    // A token names a version of this flow's state only: never another flow's folder.
    if (parsed.success && (parsed.data.v === null || isFlowStateKey(flow, parsed.data.v))) return parsed.data;
  } catch {
    // refused below
  }
  throw new InvalidParameterError(
    "page_token is not one this listing issued: pass next_page_token unchanged",
  );
}

/** Whether the flow's definition keeps operator state. */
function keepsState(flow: FlowDefinition): boolean {
  return isStatefulFlow(flow) || flow.auto_cdc !== undefined;
}

export async function readFlowState(
  plane: ControlPlane,
  pipelineId: string,
  flowName: string,
  query: FlowStateQuery,
) {
  if (
    query.page_token !== undefined &&
    (query.checkpoint_seq !== undefined || query.rewind_point_id !== undefined)
  )
    throw new InvalidParameterError(
      "page_token carries the checkpoint it came from: send it with max_results only",
    );
  if (query.checkpoint_seq !== undefined && query.rewind_point_id !== undefined)
    throw new InvalidParameterError("send checkpoint_seq or rewind_point_id, not both (neither: HEAD)");
  const { pipeline } = await loadPipeline(plane, pipelineId);
  const flows = allFlows(pipeline).map((entry) => entry.flow);
  const definition = flows.find((flow) => flow.name === flowName);
  if (!definition)
    throw new FlowNotFoundError(
      flowName,
      flows.map((flow) => flow.name),
    );
  const ref = { pipelineId, flowId: flowName };

  // 1.
  let at: Token;
  if (query.page_token !== undefined) at = decodeToken(ref, query.page_token);
  else {
    let seq: number;
    let point: string | undefined;
    if (query.rewind_point_id !== undefined) {
      const found = await findRewindPoint(
        rewindEnvironment(plane, pipelineId, pipeline),
        query.rewind_point_id,
      );
      seq = found.cut.flows.get(flowName) ?? ROOT_SEQ;
      point = found.rewindPointId;
    } else if (query.checkpoint_seq !== undefined) seq = query.checkpoint_seq;
    else seq = (await plane.checkpoints.head(ref)).seq;
    let version: string | null = null;
    if (seq !== ROOT_SEQ) {
      const checkpoint = await plane.checkpoints.get(ref, seq);
      if (!checkpoint || checkpoint.status !== "COMMITTED")
        throw new CheckpointNotFoundError(flowName, seq, (await plane.checkpoints.head(ref)).seq);
      version = checkpoint.stateVersion ?? null;
    }
    if (version === null && !keepsState(definition)) throw new FlowWithoutStateError(flowName);
    at = { v: version, s: seq, o: 0, ...(point !== undefined ? { p: point } : {}) };
  }

  // 2.
  const state = await openStateVersion({
    store: plane.bucket,
    flow: ref,
    ...(at.v !== null ? { version: at.v } : {}),
  });
  const tables = state
    .tableNames()
    .sort()
    .map((name) => state.storedTable(name)!);
  const watermark = watermarkMetaSchema.safeParse(state.meta["watermark"]);
  // 3.
  const size = query.max_results ?? DEFAULT_PAGE;
  const { rows, names } = await pageRows(tables, at.o, size, state.meta["window"]);
  const named = (table: StateTable) => names.get(table.name);
  const total = tables.reduce((sum, table) => sum + table.rows, 0);
  return {
    pipeline_id: pipelineId,
    flow: flowName,
    checkpoint_seq: at.s,
    ...(at.p !== undefined ? { rewind_point_id: at.p } : {}),
    state_version: at.v,
    watermark: watermark.success ? describeWatermark(watermark.data.micros)! : null,
    tables: tables.map((table) => ({
      name: table.name,
      key_columns: named(table)?.keyColumns ?? table.schema.key,
      value_columns: named(table)?.valueColumns ?? table.schema.value,
      num_rows: table.rows,
    })),
    rows,
    ...(at.o + size < total ? { next_page_token: encodeToken({ ...at, o: at.o + size }) } : {}),
  };
}

/**
 * Rows `offset .. offset + size` of the tables' rows laid end to end, each table ordered by its key,
 * and the user's names of the tables that have them (a windowed aggregation's, from its signature).
 */
async function pageRows(
  tables: readonly StateTable[],
  offset: number,
  size: number,
  windowSignature: unknown,
): Promise<{
  rows: { table: string; key: Record<string, unknown>; value: Record<string, unknown> }[];
  names: Map<string, NamedStateRows>;
}> {
  const page: { table: string; key: Record<string, unknown>; value: Record<string, unknown> }[] = [];
  const names = new Map<string, NamedStateRows>();
  let start = 0;
  let sandbox: Sandbox | undefined;
  try {
    for (const table of tables) {
      if (table.name === WINDOWS_TABLE) {
        const opened = (sandbox ??= await Sandbox.open());
        const template = (await opened.parsedQuery("SELECT 1", "a template")) as { node: object };
        const render = async (node: unknown) =>
          (
            await opened.deparse({
              ...template,
              node: {
                ...template.node,
                select_list: [{ ...(node as object), alias: "", query_location: 0 }],
              },
            })
          ).replace(/^SELECT\s+/i, "");
        const named = await windowStateRows(windowSignature, table.schema, render);
        if (named) names.set(table.name, named);
      }
      if (table.name === JOIN_LEFT_TABLE || table.name === JOIN_RIGHT_TABLE)
        names.set(table.name, joinStateRows(table.schema));
      const end = start + table.rows;
      const from = Math.max(offset, start);
      const to = Math.min(offset + size, end);
      start = end;
      if (from >= to) continue;
      sandbox ??= await Sandbox.open();
      await table.loadAll(sandbox, "__ebb_state_read");
      const keys = table.schema.key.map((c) => quoteIdentifier(c.name)).join(", ");
      const rows = toJsonRows(
        await sandbox.answerRows(
          `SELECT * FROM __ebb_state_read ORDER BY ${keys} LIMIT ${to - from} OFFSET ${from - (end - table.rows)}`,
        ),
      );
      const named = names.get(table.name);
      for (const row of rows)
        page.push({
          table: table.name,
          key: named?.key(row) ?? Object.fromEntries(table.schema.key.map((c) => [c.name, row[c.name]])),
          value:
            named?.value(row) ?? Object.fromEntries(table.schema.value.map((c) => [c.name, row[c.name]])),
        });
    }
  } finally {
    await sandbox?.close();
  }
  return { rows: page, names };
}
