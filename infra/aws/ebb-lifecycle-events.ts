import * as events from "aws-cdk-lib/aws-events";
import * as eventschemas from "aws-cdk-lib/aws-eventschemas";
import { Construct } from "constructs";
import {
  LIFECYCLE_DETAIL_TYPES,
  LIFECYCLE_EVENT_SOURCE,
  lifecycleEventJsonSchema,
} from "../../shared/api/lifecycle-events.ts";

export interface EbbLifecycleEventsProps {
  /**
   * The bus Ebb puts its lifecycle events on: for the account's default bus,
   * `events.EventBus.fromEventBusName(scope, "Default", "default")`.
   * @default a bus of Ebb's own
   */
  readonly eventBus?: events.IEventBus;
}

/**
 * Where Ebb's lifecycle events go on AWS (docs/events.md): an EventBridge bus, and a schema registry
 * with one schema per detail type — the JSON Schema made from the zod schemas that type the events
 * (shared/api/lifecycle-events.ts), the same text as docs/events/*.schema.json — so a reader finds
 * them in the console and generates code bindings from them.
 */
export class EbbLifecycleEvents extends Construct {
  readonly eventBus: events.IEventBus;
  readonly registry: eventschemas.CfnRegistry;

  constructor(scope: Construct, id: string, props: EbbLifecycleEventsProps = {}) {
    super(scope, id);
    this.eventBus =
      props.eventBus ??
      new events.EventBus(this, "Bus", { description: "Ebb's lifecycle events (docs/events.md)" });
    this.registry = new eventschemas.CfnRegistry(this, "Registry", {
      description: "The schemas of Ebb's lifecycle events (docs/events.md)",
    });
    for (const detailType of LIFECYCLE_DETAIL_TYPES) {
      const name = detailType.replaceAll(" ", "");
      new eventschemas.CfnSchema(this, `${name}Schema`, {
        registryName: this.registry.attrRegistryName,
        schemaName: `${LIFECYCLE_EVENT_SOURCE}@${name}`,
        type: "JSONSchemaDraft4",
        content: JSON.stringify(lifecycleEventJsonSchema(detailType)),
        description: `Ebb's "${detailType}" event`,
      });
    }
  }
}
