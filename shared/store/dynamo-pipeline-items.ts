import { z } from "zod";
import type { PipelineDefinition } from "../pipeline/definition-schema.ts";
import { PIPELINE_STATES, type DefinitionVersion, type PipelineRecord } from "./pipelines-repository.ts";
import { PIPELINES_TABLE } from "./table-schemas.ts";

/**
 * The items of the Pipelines table and their keys. The table has only a partition key, so each
 * pipeline is several items:
 *
 * - `<pipelineId>`: the pipeline (state, active update, current definition version);
 * - `<pipelineId>#v<version, 8 digits>`: one per definition version, the definition as JSON text
 *   (text, not a map, so the order of declared columns survives);
 * - `table#<catalog>.<schema>.<table>`: the claim of a table by the pipeline that owns it.
 *
 * Every item read back is parsed with its schema: a malformed item is an error here, not later.
 */

export const KEY = PIPELINES_TABLE.partitionKey;
export const PIPELINE_ITEM = "pipeline";
export const DEFINITION_ITEM = "definition";
export const CLAIM_ITEM = "table-claim";

export const pipelineItemSchema = z.object({
  pipelineId: z.string(),
  itemType: z.literal(PIPELINE_ITEM),
  name: z.string(),
  definitionVersion: z.number().int().positive(),
  pipelineState: z.enum(PIPELINE_STATES),
  activeUpdateId: z.string().optional(),
  rewindBlockedBy: z.string().optional(),
  resetUnderWay: z
    .object({ updateId: z.string(), datasets: z.array(z.string()).readonly(), since: z.number() })
    .optional(),
  tablesWrittenBy: z.number().int().positive().optional(),
  /** Absent on pipelines created before tables had owners. */
  ownedTables: z.array(z.string()).readonly().optional(),
  createdAt: z.number(),
  lastModified: z.number(),
});
export type PipelineItem = z.infer<typeof pipelineItemSchema>;

const definitionItemSchema = z.object({
  itemType: z.literal(DEFINITION_ITEM),
  version: z.number().int().positive(),
  definitionJson: z.string(),
  createdAt: z.number(),
});

export function claimKey(table: string): string {
  return `table#${table}`;
}

export function versionKey(pipelineId: string, version: number): string {
  return `${pipelineId}#v${String(version).padStart(8, "0")}`;
}

/** A pipeline item as read, or undefined when the item under that key is another kind (or none). */
export function parsePipelineItem(item: Record<string, unknown> | undefined): PipelineItem | undefined {
  return item?.["itemType"] === PIPELINE_ITEM ? pipelineItemSchema.parse(item) : undefined;
}

export function toRecord(item: PipelineItem): PipelineRecord {
  return {
    pipelineId: item.pipelineId,
    name: item.name,
    definitionVersion: item.definitionVersion,
    state: item.pipelineState,
    ...(item.activeUpdateId ? { activeUpdateId: item.activeUpdateId } : {}),
    rewindBlocked: item.rewindBlockedBy !== undefined,
    ...(item.rewindBlockedBy ? { rewindBlockedBy: item.rewindBlockedBy } : {}),
    ...(item.resetUnderWay ? { resetUnderWay: item.resetUnderWay } : {}),
    ...(item.tablesWrittenBy !== undefined ? { tablesWrittenBy: item.tablesWrittenBy } : {}),
    createdAt: item.createdAt,
    lastModified: item.lastModified,
  };
}

/** The definition is the one Ebb validated before storing it; its own validation runs on load. */
export function toDefinitionVersion(pipelineId: string, item: Record<string, unknown>): DefinitionVersion {
  const parsed = definitionItemSchema.parse(item);
  return {
    pipelineId,
    version: parsed.version,
    definition: JSON.parse(parsed.definitionJson) as PipelineDefinition,
    createdAt: parsed.createdAt,
  };
}
