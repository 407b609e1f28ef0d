import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { format, resolveConfig } from "prettier";
import {
  LIFECYCLE_DETAIL_TYPES,
  LIFECYCLE_EVENTS,
  lifecycleEventJsonSchema,
  type LifecycleDetailType,
} from "../../shared/api/lifecycle-events.ts";

/**
 * The published JSON Schemas of the lifecycle events, `docs/events/<kind>.schema.json`: made from the
 * zod schemas, as the construct's schema registry is (ebb-lifecycle-events.ts). A test checks the
 * files are current; `npx tsx infra/aws/event-schema-files.ts` writes them again.
 */

export const EVENT_SCHEMAS_DIR = fileURLToPath(new URL("../../docs/events", import.meta.url));

export function eventSchemaFile(detailType: LifecycleDetailType): string {
  return path.join(EVENT_SCHEMAS_DIR, `${LIFECYCLE_EVENTS[detailType].kind}.schema.json`);
}

/** A file's text: the schema, formatted as the repository's Prettier settings have it. */
export async function eventSchemaText(detailType: LifecycleDetailType): Promise<string> {
  const file = eventSchemaFile(detailType);
  const options = (await resolveConfig(file)) ?? {};
  return format(JSON.stringify(lifecycleEventJsonSchema(detailType)), { ...options, filepath: file });
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  mkdirSync(EVENT_SCHEMAS_DIR, { recursive: true });
  for (const detailType of LIFECYCLE_DETAIL_TYPES)
    writeFileSync(eventSchemaFile(detailType), await eventSchemaText(detailType));
  console.log(`wrote ${LIFECYCLE_DETAIL_TYPES.length} schemas to ${EVENT_SCHEMAS_DIR}`);
}
