import { randomUUID } from "node:crypto";
import { flowStatePrefix } from "../store/bucket-layout.ts";

/**
 * Object keys of a flow's operator state (architecture.md "Storage":
 * `state/<pipelineId>/<flowId>/<seq>-<uuid>.parquet`): one function each, used by writer and reader.
 * A fresh uuid per file: a retried batch writes new files and never overwrites one a checkpoint names.
 */

export interface StateFlow {
  readonly pipelineId: string;
  readonly flowId: string;
}

function stem(flow: StateFlow, seq: number): string {
  return `${flowStatePrefix(flow.pipelineId, flow.flowId)}${String(seq).padStart(10, "0")}-${randomUUID()}`;
}

/** A state version (its manifest). */
export function stateVersionKey(flow: StateFlow, seq: number): string {
  return `${stem(flow, seq)}.json`;
}

/** A changelog or snapshot of one bucket of one state table. */
export function stateDataKey(flow: StateFlow, seq: number): string {
  return `${stem(flow, seq)}.parquet`;
}

/** Whether a key lies in the flow's state folder (a checkpoint must never name another flow's state). */
export function isFlowStateKey(flow: StateFlow, key: string): boolean {
  const prefix = flowStatePrefix(flow.pipelineId, flow.flowId);
  return key.startsWith(prefix) && !key.slice(prefix.length).includes("/");
}
