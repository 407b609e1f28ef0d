import { describe, expect, it } from "vitest";
import { Match, Template } from "aws-cdk-lib/assertions";
import { API_ROUTES } from "../../../infra/aws/api-routes.ts";
import { buildStack } from "../../../infra/aws/synthesize.ts";
import { ENTRY_METADATA } from "../../../infra/aws/ebb.ts";
import {
  RETRYABLE_ERRORS,
  RUN_BUDGET_RETRY,
  TASK_TIMEOUT_SECONDS,
  UPDATE_TASKS,
} from "../../../shared/control/updates/update-tasks.ts";

// One synthesis for the file; the invariants that matter, not a serialized template.
const template = Template.fromStack(buildStack().stack);
const resources = template.toJSON()["Resources"] as Record<
  string,
  { Type: string; Properties: Record<string, unknown> }
>;
const ofType = (type: string) => Object.entries(resources).filter(([, r]) => r.Type === type);

interface AslState {
  Type: string;
  Resource?: string;
  TimeoutSeconds?: number;
  Retry?: { ErrorEquals: string[] }[];
  Catch?: { ErrorEquals: string[]; Next: string; ResultPath?: string }[];
  Parameters?: Record<string, unknown>;
  ItemProcessor?: { States: Record<string, AslState> };
}

/** The state machine's definition, tokens replaced by their logical ids. */
function definition(): { States: Record<string, AslState> } {
  const [machine] = ofType("AWS::StepFunctions::StateMachine").map(([, resource]) => resource);
  if (!machine) throw new Error("the stack has no state machine");
  const join = (machine.Properties["DefinitionString"] as { "Fn::Join": [string, unknown[]] })["Fn::Join"][1];
  const text = join
    .map((part) => (typeof part === "string" ? part : JSON.stringify(part).replace(/"/g, "'")))
    .join("");
  return JSON.parse(text) as { States: Record<string, AslState> };
}

function allStates(states: Record<string, AslState>): [string, AslState][] {
  return Object.entries(states).flatMap(([name, state]) => [
    [name, state] as [string, AslState],
    ...(state.ItemProcessor ? allStates(state.ItemProcessor.States) : []),
  ]);
}

describe("control plane stack", () => {
  it("serves every route of api.md, each method with IAM auth", () => {
    const methods = ofType("AWS::ApiGateway::Method");
    expect(methods).toHaveLength(API_ROUTES.length);
    for (const [, method] of methods) expect(method.Properties["AuthorizationType"]).toBe("AWS_IAM");
  });

  it("runs every function on nodejs22.x with its own log group that expires", () => {
    const functions = ofType("AWS::Lambda::Function");
    expect(functions.length).toBe(API_ROUTES.length + 1 + 9);
    for (const [, fn] of functions) {
      expect(fn.Properties["Runtime"]).toBe("nodejs22.x");
      expect(fn.Properties["LoggingConfig"]).toMatchObject({ LogGroup: { Ref: expect.any(String) } });
    }
    for (const [, group] of ofType("AWS::Logs::LogGroup"))
      expect(group.Properties["RetentionInDays"]).toBeGreaterThan(0);
  });

  it("grants no action on every resource (no Resource: *) but those that take no resource", () => {
    // X-Ray traces and Step Functions' log delivery name no resource: AWS allows only "*" for them.
    const resourceless =
      /^(xray:|logs:(Create|Get|Update|Delete|List)LogDeliver|logs:(Put|Describe)ResourcePolic|logs:DescribeLogGroups)/;
    for (const [id, policy] of ofType("AWS::IAM::Policy")) {
      const statements = (
        policy.Properties["PolicyDocument"] as {
          Statement: { Resource: unknown; Action: string | string[] }[];
        }
      ).Statement;
      for (const statement of statements) {
        const list = Array.isArray(statement.Resource) ? statement.Resource : [statement.Resource];
        const actions = Array.isArray(statement.Action) ? statement.Action : [statement.Action];
        if (actions.every((action) => resourceless.test(action))) continue;
        expect(list, `${id} grants ${actions.join(", ")} on every resource`).not.toContain("*");
      }
    }
  });

  it("lists the bucket only under the prefixes a function is granted", () => {
    for (const [id, policy] of ofType("AWS::IAM::Policy")) {
      const statements = (
        policy.Properties["PolicyDocument"] as {
          Statement: { Action: string | string[]; Condition?: Record<string, Record<string, unknown>> }[];
        }
      ).Statement;
      for (const statement of statements) {
        const actions = Array.isArray(statement.Action) ? statement.Action : [statement.Action];
        if (!actions.some((action) => action.startsWith("s3:List"))) continue;
        expect(actions, id).toEqual(["s3:ListBucket"]);
        const prefixes = statement.Condition?.["StringLike"]?.["s3:prefix"] as string[];
        for (const prefix of prefixes) expect(prefix, id).toMatch(/^(tables|state|statements)\/\*$/);
      }
    }
  });

  it("throttles the API stage and writes its access logs", () => {
    template.hasResourceProperties("AWS::ApiGateway::Stage", {
      MethodSettings: [Match.objectLike({ ThrottlingRateLimit: 50, ThrottlingBurstLimit: 100 })],
      AccessLogSetting: Match.objectLike({
        DestinationArn: Match.anyValue(),
        Format: Match.stringLikeRegexp("requestId"),
      }),
    });
  });

  it("logs every method's errors to CloudWatch, without request or response bodies", () => {
    template.hasResourceProperties("AWS::ApiGateway::Stage", {
      MethodSettings: [
        Match.objectLike({
          HttpMethod: "*",
          ResourcePath: "/*",
          LoggingLevel: "ERROR",
          DataTraceEnabled: false,
        }),
      ],
    });
  });

  it("logs every event of the state machine, without its data, and traces it with X-Ray", () => {
    template.hasResourceProperties("AWS::StepFunctions::StateMachine", {
      LoggingConfiguration: Match.objectLike({ Level: "ALL", IncludeExecutionData: false }),
      TracingConfiguration: { Enabled: true },
    });
  });

  it("retries the capture schedule's target and keeps what still fails in an encrypted dead-letter queue", () => {
    template.hasResourceProperties("AWS::Events::Rule", {
      Targets: [
        Match.objectLike({
          RetryPolicy: { MaximumRetryAttempts: 2, MaximumEventAgeInSeconds: 3600 },
          DeadLetterConfig: { Arn: Match.anyValue() },
        }),
      ],
    });
    template.hasResourceProperties("AWS::SQS::Queue", {
      SqsManagedSseEnabled: true,
      MessageRetentionPeriod: 1_209_600,
    });
  });

  it("sets each table's variable exactly where it grants that table, and grants bucket objects by prefix", () => {
    const roles = new Map(ofType("AWS::IAM::Role").map(([id]) => [id, id]));
    const policies = ofType("AWS::IAM::Policy");
    for (const [id, fn] of ofType("AWS::Lambda::Function")) {
      const env = ((
        fn.Properties["Environment"] as { Variables?: Record<string, { Ref?: string }> } | undefined
      )?.Variables ?? {}) as Record<string, { Ref?: string }>;
      const role = (fn.Properties["Role"] as { "Fn::GetAtt": [string, string] })["Fn::GetAtt"][0];
      expect(roles.has(role)).toBe(true);
      // The statements only: a cdk-nag suppression's metadata names resources too.
      const policy = JSON.stringify(
        policies.find(([, p]) => JSON.stringify(p.Properties["Roles"]).includes(role))?.[1].Properties ?? {},
      );
      const tables = ofType("AWS::DynamoDB::Table").map(([tableId]) => tableId);
      const named = Object.values(env).flatMap((value) =>
        value.Ref && tables.includes(value.Ref) ? [value.Ref] : [],
      );
      for (const table of tables)
        expect(policy.includes(table), `${id} and ${table}`).toBe(named.includes(table));
      expect(policy).not.toMatch(/"Arn"\]\},"\/\*"/);
    }
  });

  it("retries transient errors and catches everything on every task of the state machine", () => {
    const tasks = allStates(definition().States).filter(([, state]) => state.Type === "Task");
    expect(tasks.map(([name]) => name).sort()).toEqual([
      "ContinueUpdate",
      "FailUpdate",
      "FailUpdateInCycle",
      "FailUpdateInRewind",
      "FailUpdateInRun",
      "FinishRewind",
      "FinishUpdate",
      "NextCycle",
      "PlanUpdate",
      "ResetDatasets",
      "RewindDataset",
      "RunFlow",
      "RunFlowInCycle",
    ]);
    for (const [name, task] of tasks) {
      expect(task.TimeoutSeconds, name).toBe(TASK_TIMEOUT_SECONDS);
      expect(task.Retry?.[0]?.ErrorEquals, name).toEqual([...RETRYABLE_ERRORS]);
      expect(task.Catch?.[0]?.ErrorEquals, name).toEqual(["States.ALL"]);
      // RunFlow loops until caught up by retrying a spent budget; no other task has that retrier.
      const budget = name === "RunFlow" || name === "RunFlowInCycle" ? [RUN_BUDGET_RETRY.error] : undefined;
      expect(task.Retry?.[1]?.ErrorEquals, name).toEqual(budget);
    }
    const maps = allStates(definition().States).filter(([, state]) => state.Type === "Map");
    for (const [name, map] of maps) {
      expect(JSON.stringify(map), name).toContain('"Mode":"INLINE"');
      if (name === "RewindWaves" || name === "RunLevels" || name === "CycleLevels")
        expect(map.Catch?.[0]?.ErrorEquals).toEqual(["States.ALL"]);
    }
  });

  it("hands a RunFlow's timeout or out-of-memory to FailUpdate with the item's flow, never lost to INTERNAL_ERROR", () => {
    const states = Object.fromEntries(allStates(definition().States));
    for (const [run, fail] of [
      ["RunFlow", "FailUpdateInRun"],
      ["RunFlowInCycle", "FailUpdateInCycle"],
    ] as const) {
      // States.ALL takes States.Timeout, Sandbox.Timedout and Runtime.OutOfMemory (no Retry names
      // them: a task that ran out is not run again as it was); ResultPath keeps the item's input.
      const retried = (states[run]?.Retry ?? []).flatMap((retry) => retry.ErrorEquals);
      for (const limit of ["States.Timeout", "Sandbox.Timedout", "Runtime.OutOfMemory", "States.ALL"])
        expect(retried, run).not.toContain(limit);
      expect(states[run]?.Catch, run).toEqual([
        { ErrorEquals: ["States.ALL"], Next: fail, ResultPath: "$.error" },
      ]);
      // FailUpdate is invoked with the whole state (item fields and error): no chosen payload.
      expect(states[fail]?.Parameters, fail).toBeUndefined();
    }
  });

  it("has the same task states, invoking the same functions, as the in-process driver walks", () => {
    const entries = Object.fromEntries(
      Object.entries(template.toJSON()["Resources"] as Record<string, { Metadata?: Record<string, string> }>)
        .filter(([, resource]) => resource.Metadata?.[ENTRY_METADATA] !== undefined)
        .map(([id, resource]) => [id, resource.Metadata![ENTRY_METADATA]]),
    );
    const tasks = allStates(definition().States).filter(([, state]) => state.Type === "Task");
    const invoked = Object.fromEntries(
      tasks.map(([name, task]) => {
        const functionId = /'Fn::GetAtt':\['([A-Za-z0-9]+)','Arn'\]/.exec(task.Resource ?? "")?.[1];
        // The task waits as long as its function may run, no less.
        expect(resources[functionId ?? ""]?.Properties["Timeout"], name).toBe(TASK_TIMEOUT_SECONDS);
        return [name, entries[functionId ?? ""]];
      }),
    );
    expect(invoked).toEqual(
      Object.fromEntries(
        Object.entries(UPDATE_TASKS).map(([name, entry]) => [name, `functions/tasks/${entry}.ts`]),
      ),
    );
  });

  it("captures rewind points hourly and outputs the API URL, bucket and state machine", () => {
    template.hasResourceProperties("AWS::Events::Rule", {
      ScheduleExpression: "rate(1 hour)",
      Targets: [
        Match.objectLike({ Arn: { "Fn::GetAtt": [Match.stringLikeRegexp("CaptureRewindPoints"), "Arn"] } }),
      ],
    });
    const outputs = Object.keys(template.toJSON()["Outputs"] as object);
    expect(outputs).toEqual(expect.arrayContaining(["ApiUrl", "BucketName", "StateMachineArn"]));
  });
});
