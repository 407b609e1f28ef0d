import type { CfnTemplate } from "../aws/synthesize.ts";
import { ENTRY_METADATA } from "../aws/ebb.ts";
import { ProvisioningError } from "./errors.ts";

/**
 * What the local runtime needs of the synthesized template besides storage: each function's handler
 * module and environment, the API's routes, and the state machine's definition — all read from the
 * same template `cdk deploy` deploys, so nothing is defined twice. CloudFormation tokens are resolved
 * to local stand-ins: a table or bucket `Ref` to its provisioned name, a function's `Arn` to a local
 * ARN naming its logical id.
 */

export const LOCAL_ACCOUNT = "000000000000";

export interface LocalFunction {
  readonly logicalId: string;
  /** `functions/….ts`, relative to the project root. */
  readonly entry: string;
  readonly environment: Readonly<Record<string, string>>;
}

export interface LocalRoute {
  readonly method: string;
  /** `/api/2.0/pipelines/{pipeline_id}`. */
  readonly path: string;
  readonly functionId: string;
}

const PSEUDO_PARAMETERS = (region: string): Record<string, string> => ({
  "AWS::Region": region,
  "AWS::AccountId": LOCAL_ACCOUNT,
  "AWS::Partition": "aws",
  "AWS::URLSuffix": "amazonaws.com",
});

type Resource = CfnTemplate["Resources"][string] & { readonly Metadata?: Record<string, unknown> };

export function localFunctionArn(region: string, logicalId: string): string {
  return `arn:aws:lambda:${region}:${LOCAL_ACCOUNT}:function:${logicalId}`;
}

export function localStateMachineArn(region: string, logicalId: string): string {
  return `arn:aws:states:${region}:${LOCAL_ACCOUNT}:stateMachine:${logicalId}`;
}

/** Resolves the tokens the stack uses in environments and the state machine definition. */
export function tokenResolver(
  template: CfnTemplate,
  physicalNames: Readonly<Record<string, string>>,
  region: string,
): (value: unknown) => string {
  const resolve = (value: unknown): string => {
    if (typeof value === "string") return value;
    const token = value as Record<string, unknown>;
    if (typeof token["Ref"] === "string") {
      const id = token["Ref"];
      const pseudo = PSEUDO_PARAMETERS(region)[id];
      if (pseudo !== undefined) return pseudo;
      const type = template.Resources[id]?.Type;
      if (type === "AWS::StepFunctions::StateMachine") return localStateMachineArn(region, id);
      if (type === "AWS::Lambda::Function") return id;
      // No event bus locally: lifecycle events go to the webhook (docs/events.md).
      if (type === "AWS::Events::EventBus") return "";
      // The Spark engine's log group: a name the local job runner ignores.
      if (type === "AWS::Logs::LogGroup") return id;
      const name = physicalNames[id];
      if (name === undefined)
        throw new ProvisioningError(`no local resource for Ref ${id} (${type ?? "unknown"})`);
      return name;
    }
    const getAtt = token["Fn::GetAtt"] as [string, string] | undefined;
    if (getAtt) {
      const [id, attribute] = getAtt;
      const type = template.Resources[id]?.Type;
      if (type === "AWS::Lambda::Function" && attribute === "Arn") return localFunctionArn(region, id);
      if (type === "AWS::StepFunctions::StateMachine" && attribute === "Arn")
        return localStateMachineArn(region, id);
      // The Spark engine's application and job role: names the local job runner ignores.
      if (type === "AWS::EMRServerless::Application" && attribute === "ApplicationId") return id;
      if (type === "AWS::IAM::Role" && attribute === "Arn") return `arn:aws:iam::${LOCAL_ACCOUNT}:role/${id}`;
      const name = physicalNames[id];
      if (name !== undefined && attribute === "Arn") return name;
      throw new ProvisioningError(`cannot resolve Fn::GetAtt ${id}.${attribute} locally`);
    }
    const join = token["Fn::Join"] as [string, unknown[]] | undefined;
    if (join) return join[1].map(resolve).join(join[0]);
    // An asset's URL (the Spark entry script's): the pseudo parameters substituted.
    const sub = token["Fn::Sub"];
    if (typeof sub === "string")
      return sub.replace(
        /\$\{(AWS::[A-Za-z]+)\}/g,
        (whole, name: string) => PSEUDO_PARAMETERS(region)[name] ?? whole,
      );
    throw new ProvisioningError(`cannot resolve ${JSON.stringify(value).slice(0, 120)} locally`);
  };
  return resolve;
}

export function templateFunctions(
  template: CfnTemplate,
  resolve: (value: unknown) => string,
): LocalFunction[] {
  return Object.entries(template.Resources as Record<string, Resource>)
    .filter(([, resource]) => resource.Type === "AWS::Lambda::Function")
    .map(([logicalId, resource]) => {
      const entry = resource.Metadata?.[ENTRY_METADATA];
      if (typeof entry !== "string")
        throw new ProvisioningError(`function ${logicalId} has no ${ENTRY_METADATA} metadata`);
      const variables = ((
        resource.Properties?.["Environment"] as { Variables?: Record<string, unknown> } | undefined
      )?.Variables ?? {}) as Record<string, unknown>;
      const environment = Object.fromEntries(
        Object.entries(variables).map(([name, value]) => [name, resolve(value)]),
      );
      return { logicalId, entry, environment };
    });
}

/** The API's routes: each method's full path (from its resource chain) and the function it integrates. */
export function templateRoutes(template: CfnTemplate): LocalRoute[] {
  const resources = template.Resources as Record<string, Resource>;
  const pathOf = (resourceId: unknown): string => {
    const ref = (resourceId as { Ref?: string }).Ref;
    if (ref === undefined) return ""; // Fn::GetAtt [api, RootResourceId]
    const resource = resources[ref];
    if (!resource) throw new ProvisioningError(`API resource ${ref} is missing`);
    return `${pathOf(resource.Properties?.["ParentId"])}/${String(resource.Properties?.["PathPart"])}`;
  };
  return Object.values(resources)
    .filter((resource) => resource.Type === "AWS::ApiGateway::Method")
    .map((method) => {
      const uri = JSON.stringify(
        (method.Properties?.["Integration"] as { Uri?: unknown } | undefined)?.Uri ?? {},
      );
      const functionId = /"Fn::GetAtt":\["([^"]+)","Arn"\]/.exec(uri)?.[1];
      if (!functionId) throw new ProvisioningError(`API method ${uri.slice(0, 80)} integrates no function`);
      return {
        method: String(method.Properties?.["HttpMethod"]),
        path: pathOf(method.Properties?.["ResourceId"]) || "/",
        functionId,
      };
    });
}

/** The state machine's logical id and its definition with every token resolved. */
export function templateStateMachine(
  template: CfnTemplate,
  resolve: (value: unknown) => string,
): { readonly logicalId: string; readonly definition: Record<string, unknown> } {
  const found = Object.entries(template.Resources).find(
    ([, r]) => r.Type === "AWS::StepFunctions::StateMachine",
  );
  if (!found) throw new ProvisioningError("the template has no state machine");
  const [logicalId, machine] = found;
  return {
    logicalId,
    definition: JSON.parse(resolve(machine.Properties?.["DefinitionString"])) as Record<string, unknown>,
  };
}

export interface LocalSchedule {
  readonly functionId: string;
  readonly intervalMs: number;
}

const RATE = /^rate\((\d+) (minute|minutes|hour|hours|day|days)\)$/;
const UNIT_MS: Readonly<Record<string, number>> = { minute: 60_000, hour: 3_600_000, day: 86_400_000 };

/** Each EventBridge rule on a `rate(…)` schedule with the function it invokes. */
export function templateSchedules(template: CfnTemplate): LocalSchedule[] {
  return Object.values(template.Resources).flatMap((resource) => {
    if (resource.Type !== "AWS::Events::Rule") return [];
    const rate = RATE.exec(String(resource.Properties?.["ScheduleExpression"] ?? ""));
    if (!rate) return [];
    const intervalMs = Number(rate[1]) * (UNIT_MS[(rate[2] as string).replace(/s$/, "")] as number);
    const targets = (resource.Properties?.["Targets"] ?? []) as {
      Arn?: { "Fn::GetAtt"?: [string, string] };
    }[];
    return targets.flatMap((target) => {
      const functionId = target.Arn?.["Fn::GetAtt"]?.[0];
      return functionId ? [{ functionId, intervalMs }] : [];
    });
  });
}
