import { readFileSync } from "node:fs";
import { App, Stack } from "aws-cdk-lib";
import { Template } from "aws-cdk-lib/assertions";
import * as events from "aws-cdk-lib/aws-events";
import { describe, expect, it } from "vitest";
import { Ebb } from "../../../infra/aws/ebb.ts";
import { eventSchemaFile } from "../../../infra/aws/event-schema-files.ts";
import { buildStack } from "../../../infra/aws/synthesize.ts";
import { ENVIRONMENT } from "../../../functions/runtime/environment.ts";
import { LIFECYCLE_DETAIL_TYPES } from "../../../shared/api/lifecycle-events.ts";

// Synthesize-only: the bus, its schema registry, and who may put events on it (docs/events.md).

type Resources = Record<
  string,
  { Type: string; Properties: Record<string, unknown>; Metadata?: Record<string, unknown> }
>;

const resourcesOf = (stack: Stack) => Template.fromStack(stack).toJSON()["Resources"] as Resources;

/** The functions that publish lifecycle events: those that start an update, end one of its stages or stop it. */
const PUBLISHERS = [
  "functions/start-update.ts",
  "functions/stop-pipeline.ts",
  "functions/rewind-to-cut.ts",
  "functions/start-ordered-run.ts",
  "functions/tasks/plan-update.ts",
  "functions/tasks/finish-rewind.ts",
  "functions/tasks/reset-datasets.ts",
  "functions/tasks/finish-update.ts",
  "functions/tasks/fail-update.ts",
];

/** Per function's entry: its bus variable and the resources its role may put events on. */
function eventAccess(resources: Resources) {
  const roleOf = (fn: { Properties: Record<string, unknown> }) =>
    (fn.Properties["Role"] as { "Fn::GetAtt": [string, string] })["Fn::GetAtt"][0];
  const putEventsOf = (role: string): unknown[] =>
    Object.values(resources)
      .filter((r) => r.Type === "AWS::IAM::Policy")
      .filter((p) => (p.Properties["Roles"] as { Ref?: string }[]).some((ref) => ref.Ref === role))
      .flatMap((p) => (p.Properties["PolicyDocument"] as { Statement: Record<string, unknown>[] }).Statement)
      .filter((s) => [s["Action"]].flat().some((a) => String(a).startsWith("events:")))
      .map((s) => ({ action: s["Action"], resource: s["Resource"] }));
  return Object.values(resources)
    .filter((r) => r.Type === "AWS::Lambda::Function" && r.Metadata?.["ebb:entry"] !== undefined)
    .map((fn) => ({
      entry: String(fn.Metadata?.["ebb:entry"]),
      bus: (fn.Properties["Environment"] as { Variables?: Record<string, unknown> } | undefined)?.Variables?.[
        ENVIRONMENT.eventBus
      ],
      puts: putEventsOf(roleOf(fn)),
    }));
}

describe("lifecycle events on AWS", () => {
  const resources = resourcesOf(buildStack().stack);
  const busId = Object.entries(resources).find(([, r]) => r.Type === "AWS::Events::EventBus")?.[0];

  it("has a bus of Ebb's own, and a schema registry with each detail type's published JSON Schema", () => {
    expect(busId).toBeDefined();
    const schemas = Object.values(resources).filter((r) => r.Type === "AWS::EventSchemas::Schema");
    expect(Object.values(resources).filter((r) => r.Type === "AWS::EventSchemas::Registry")).toHaveLength(1);
    expect(schemas.map((s) => s.Properties["SchemaName"]).sort()).toEqual(
      LIFECYCLE_DETAIL_TYPES.map((t) => `ebb@${t.replaceAll(" ", "")}`).sort(),
    );
    for (const detailType of LIFECYCLE_DETAIL_TYPES) {
      const schema = schemas.find(
        (s) => s.Properties["SchemaName"] === `ebb@${detailType.replaceAll(" ", "")}`,
      );
      expect(schema?.Properties["Type"]).toBe("JSONSchemaDraft4");
      // One source: the registry holds what the repository publishes.
      expect(JSON.parse(String(schema?.Properties["Content"]))).toEqual(
        JSON.parse(readFileSync(eventSchemaFile(detailType), "utf8")),
      );
    }
  });

  it("lets exactly the publishing functions put events, on that bus only (least privilege)", () => {
    const access = eventAccess(resources);
    const busArn = { "Fn::GetAtt": [busId, "Arn"] };
    for (const fn of access) {
      if (PUBLISHERS.includes(fn.entry)) {
        expect(fn.bus, fn.entry).toEqual({ Ref: busId });
        expect(fn.puts, fn.entry).toEqual([{ action: "events:PutEvents", resource: busArn }]);
      } else {
        expect(fn.bus, fn.entry).toBeUndefined();
        expect(fn.puts, fn.entry).toEqual([]);
      }
    }
    expect(
      access
        .filter((fn) => fn.bus !== undefined)
        .map((fn) => fn.entry)
        .sort(),
    ).toEqual([...PUBLISHERS].sort());
  });

  it("puts the events on a bus the user gives (the account's default bus), and makes none", () => {
    const app = new App({ context: { "aws:cdk:bundling-stacks": [] } });
    const stack = new Stack(app, "DefaultBus", { env: { account: "123456789012", region: "eu-west-1" } });
    new Ebb(stack, "Ebb", { eventBus: events.EventBus.fromEventBusName(stack, "Default", "default") });
    const own = resourcesOf(stack);
    expect(Object.values(own).filter((r) => r.Type === "AWS::Events::EventBus")).toEqual([]);
    expect(Object.values(own).filter((r) => r.Type === "AWS::EventSchemas::Schema")).toHaveLength(
      LIFECYCLE_DETAIL_TYPES.length,
    );
    for (const fn of eventAccess(own).filter((f) => PUBLISHERS.includes(f.entry))) {
      expect(fn.bus).toBe("default");
      expect(fn.puts).toEqual([
        {
          action: "events:PutEvents",
          resource: {
            "Fn::Join": [
              "",
              ["arn:", { Ref: "AWS::Partition" }, ":events:eu-west-1:123456789012:event-bus/default"],
            ],
          },
        },
      ]);
    }
  });
});
