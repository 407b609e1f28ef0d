import { readFileSync } from "node:fs";
import Ajv from "ajv";
import draft04 from "ajv/lib/refs/json-schema-draft-04.json" with { type: "json" };
import { eventSchemaFile } from "../../infra/aws/event-schema-files.ts";
import { LIFECYCLE_DETAIL_TYPES, type LifecycleDetailType } from "../../shared/api/lifecycle-events.ts";

/**
 * Checks an event against the JSON Schema the repository publishes for its detail type
 * (docs/events/*.schema.json, draft 4 as EventBridge's registry reads), with Ajv: the schema a
 * reader outside Ebb would use, not the zod schema Ebb builds events with.
 */
const ajv = new Ajv({ schemaId: "auto", allErrors: true });
ajv.addMetaSchema(draft04);
const validators = new Map(
  LIFECYCLE_DETAIL_TYPES.map((type) => [
    type,
    ajv.compile(JSON.parse(readFileSync(eventSchemaFile(type), "utf8")) as object),
  ]),
);

/** The schema's complaints about `event` (none: it is valid). */
export function schemaErrors(event: { readonly "detail-type": string; readonly detail?: unknown }): string[] {
  const validate = validators.get(event["detail-type"] as LifecycleDetailType);
  if (!validate) return [`no schema for detail-type ${JSON.stringify(event["detail-type"])}`];
  if (validate(event)) return [];
  return (validate.errors ?? []).map((e) => `${e.dataPath} ${e.message ?? ""}`);
}
