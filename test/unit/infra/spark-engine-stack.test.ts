import { readFile } from "node:fs/promises";
import { App, Stack } from "aws-cdk-lib";
import { Match, Template } from "aws-cdk-lib/assertions";
import * as ec2 from "aws-cdk-lib/aws-ec2";
import * as s3 from "aws-cdk-lib/aws-s3";
import * as sfn from "aws-cdk-lib/aws-stepfunctions";
import { describe, expect, it } from "vitest";
import { Ebb, type EbbProps } from "../../../infra/aws/ebb.ts";
import type { EbbEventStreams } from "../../../infra/aws/event-stream-access.ts";
import {
  EbbSparkEngine,
  EMR_RELEASE_LABEL,
  KAFKA_CLIENTS_PACKAGE,
} from "../../../infra/aws/ebb-spark-engine.ts";

const CLUSTER_ARN =
  "arn:aws:kafka:us-east-1:123456789012:cluster/shop/0b1c2d3e-4f50-6172-8394-a5b6c7d8e9f0-1";

/**
 * The Spark engine's template: an EMR Serverless application on the pinned release with auto-stop and
 * no warm capacity, a job role scoped to the bucket's prefixes, and a state that runs a batch with
 * Step Functions' own `startJobRun.sync` integration, retried on throttling and caught by the machine.
 */

function synthesize(kafkaClient?: boolean) {
  const app = new App();
  const stack = new Stack(app, "Spark", { env: { account: "123456789012", region: "eu-west-1" } });
  const bucket = new s3.Bucket(stack, "Bucket");
  const engine = new EbbSparkEngine(stack, "SparkEngine", {
    bucket,
    ...(kafkaClient !== undefined ? { kafkaClient } : {}),
  });
  const failed = new sfn.Pass(stack, "MarkFailed");
  const run = engine.runBatchState("RunSparkBatch", {
    requestUriPath: "$.requestUri",
    resultPath: "$.spark",
  });
  run.addCatch(failed, { errors: ["States.ALL"], resultPath: "$.error" });
  const machine = new sfn.StateMachine(stack, "Machine", {
    definitionBody: sfn.DefinitionBody.fromChainable(run),
  });
  engine.grantRunBatches(machine);
  return Template.fromStack(stack);
}

describe("the Spark engine's stack", () => {
  const template = synthesize();

  it("creates an EMR Serverless Spark application on the pinned release, auto-stop on, no warm workers", () => {
    template.hasResourceProperties("AWS::EMRServerless::Application", {
      ReleaseLabel: EMR_RELEASE_LABEL,
      Type: "SPARK",
      AutoStopConfiguration: { Enabled: true, IdleTimeoutMinutes: 15 },
      InitialCapacity: Match.absent(),
    });
  });

  it("runs a batch with startJobRun.sync, retried on throttling and caught", () => {
    const [machine] = Object.values(template.findResources("AWS::StepFunctions::StateMachine"));
    const definition = JSON.stringify(machine!["Properties"]["DefinitionString"]);
    expect(definition).toContain(":states:::emr-serverless:startJobRun.sync");
    expect(definition).toContain("EMRServerless.ThrottlingException");
    expect(definition).toContain("States.ALL");
    expect(definition).toContain("States.Array('--request', $.requestUri)");
    // No Maven fetch at a job's start unless Kafka batches are let in.
    expect(definition).not.toContain("spark.jars.packages");
  });

  it("lets kafka batches in with kafkaClient: each job fetches the Kafka client the local Spark pins", async () => {
    const [machine] = Object.values(synthesize(true).findResources("AWS::StepFunctions::StateMachine"));
    const definition = JSON.stringify(machine!["Properties"]["DefinitionString"]);
    expect(definition).toContain(`--conf spark.jars.packages=${KAFKA_CLIENTS_PACKAGE}`);
    const pom = await readFile(new URL("../../../functions/spark/pom.xml", import.meta.url), "utf8");
    const [group, artifact, version] = KAFKA_CLIENTS_PACKAGE.split(":");
    expect(pom).toContain(
      `<groupId>${group}</groupId>\n      <artifactId>${artifact}</artifactId>\n      <version>${version}</version>`,
    );
  });

  it("scopes the job role to the bucket's tables/ and state/ prefixes", () => {
    const policies = Object.values(template.findResources("AWS::IAM::Policy"));
    const statements = policies.flatMap(
      (p) =>
        p["Properties"]["PolicyDocument"]["Statement"] as { Action: string | string[]; Resource: unknown }[],
    );
    const writes = statements.filter((s) => [s.Action].flat().includes("s3:PutObject"));
    expect(writes).toHaveLength(1);
    const resources = JSON.stringify(writes[0]!.Resource);
    expect(resources).toContain("/tables/*");
    expect(resources).toContain("/state/*");
    expect(resources).not.toMatch(/"\/\*"/);
    template.hasResourceProperties("AWS::IAM::Role", {
      AssumeRolePolicyDocument: Match.objectLike({
        Statement: [Match.objectLike({ Principal: { Service: "emr-serverless.amazonaws.com" } })],
      }),
    });
  });

  it("lets the state machine start, watch and cancel job runs of this application only, and pass the job role", () => {
    const policies = Object.values(template.findResources("AWS::IAM::Policy"));
    const statements = policies.flatMap(
      (p) =>
        p["Properties"]["PolicyDocument"]["Statement"] as { Action: string | string[]; Resource: unknown }[],
    );
    const start = statements.find((s) => [s.Action].flat().includes("emr-serverless:StartJobRun"));
    expect(JSON.stringify(start?.Resource)).toContain("/applications/");
    expect(statements.some((s) => [s.Action].flat().includes("iam:PassRole"))).toBe(true);
  });
});

/**
 * The whole construct with `sparkEngine` on: the application and job role exist, RunFlow knows the
 * application, and each RunFlow (a run's and a continuous cycle's) is followed by a Choice that runs
 * a batch RunFlow handed over with `startJobRun.sync` and loops back to RunFlow, on success and on
 * failure alike. Off, none of it is there.
 */
interface AslState {
  Type: string;
  Resource?: string;
  Next?: string;
  End?: boolean;
  ResultPath?: string;
  TimeoutSeconds?: number;
  Retry?: { ErrorEquals: string[] }[];
  Catch?: { ErrorEquals: string[]; Next: string; ResultPath?: string }[];
  Choices?: { Variable?: string; IsPresent?: boolean; Next: string }[];
  Default?: string;
  Parameters?: Record<string, unknown>;
  ItemProcessor?: { States: Record<string, AslState> };
}

function ebbTemplate(sparkEngine?: EbbProps["sparkEngine"], streams?: (stack: Stack) => EbbEventStreams) {
  const app = new App({ context: { "aws:cdk:bundling-stacks": [] } });
  const stack = new Stack(app, "WithSpark", { env: { account: "123456789012", region: "us-east-1" } });
  const landing = s3.Bucket.fromBucketName(stack, "Landing", "their-landing-bucket");
  new Ebb(stack, "Ebb", {
    sourceBuckets: [{ bucket: landing, prefix: "orders/" }],
    ...(sparkEngine ? { sparkEngine } : {}),
    ...(streams ? { eventStreams: streams(stack) } : {}),
  });
  return Template.fromStack(stack);
}

/** MSK brokers in a VPC, reached through a security group of the user's. */
function mskAccess(stack: Stack): EbbEventStreams {
  const vpc = new ec2.Vpc(stack, "Vpc", { maxAzs: 2, natGateways: 1 });
  return {
    msk: {
      clusters: [{ clusterArn: CLUSTER_ARN }],
      vpc,
      securityGroups: [new ec2.SecurityGroup(stack, "BrokerClients", { vpc })],
    },
  };
}

/** Every state of the update machine, Map item processors' included (tokens as JSON strings). */
function machineStates(template: Template): Record<string, AslState> {
  const [machine] = Object.values(template.findResources("AWS::StepFunctions::StateMachine"));
  const join = (machine!["Properties"]["DefinitionString"] as { "Fn::Join": [string, unknown[]] })[
    "Fn::Join"
  ][1];
  const text = join
    .map((part) => (typeof part === "string" ? part : JSON.stringify(part).replace(/"/g, "'")))
    .join("");
  const all: Record<string, AslState> = {};
  const visit = (states: Record<string, AslState>) => {
    for (const [name, state] of Object.entries(states)) {
      all[name] = state;
      if (state.ItemProcessor) visit(state.ItemProcessor.States);
    }
  };
  visit((JSON.parse(text) as { States: Record<string, AslState> }).States);
  return all;
}

function statementsOf(template: Template) {
  return Object.values(template.findResources("AWS::IAM::Policy")).flatMap(
    (p) =>
      p["Properties"]["PolicyDocument"]["Statement"] as {
        Action: string | string[];
        Resource: unknown;
        Condition?: unknown;
      }[],
  );
}

describe("the Ebb construct with sparkEngine on", () => {
  const template = ebbTemplate(
    { enabled: true, maximumCapacity: { cpu: "64 vCPU", memory: "256 GB" } },
    mskAccess,
  );
  const states = machineStates(template);

  it("creates the application (pinned release, auto-start and auto-stop on, no warm capacity, its ceiling)", () => {
    template.resourceCountIs("AWS::EMRServerless::Application", 1);
    template.hasResourceProperties("AWS::EMRServerless::Application", {
      ReleaseLabel: EMR_RELEASE_LABEL,
      Type: "SPARK",
      AutoStartConfiguration: { Enabled: true },
      AutoStopConfiguration: { Enabled: true, IdleTimeoutMinutes: 15 },
      InitialCapacity: Match.absent(),
      MaximumCapacity: { Cpu: "64 vCPU", Memory: "256 GB" },
    });
  });

  it("tells RunFlow the application, so its Spark batches are handed to the state machine", () => {
    template.hasResourceProperties("AWS::Lambda::Function", {
      Environment: {
        Variables: Match.objectLike({
          EBB_SPARK_APPLICATION_ID: {
            "Fn::GetAtt": [Match.stringLikeRegexp("SparkEngineApplication"), "ApplicationId"],
          },
        }),
      },
    });
    const functions = Object.values(template.findResources("AWS::Lambda::Function"));
    const told = functions.filter((fn) =>
      JSON.stringify(fn["Properties"]["Environment"] ?? {}).includes("EBB_SPARK_APPLICATION_ID"),
    );
    expect(told).toHaveLength(1);
  });

  it("runs the application in the MSK access' VPC, subnets and security groups, as RunFlow runs", () => {
    const [application] = Object.values(template.findResources("AWS::EMRServerless::Application"));
    const network = application!["Properties"]["NetworkConfiguration"];
    expect(network.SecurityGroupIds).toEqual([
      { "Fn::GetAtt": [expect.stringMatching(/BrokerClients/), "GroupId"] },
    ]);
    const runFlow = Object.values(template.findResources("AWS::Lambda::Function")).find((fn) =>
      JSON.stringify(fn["Properties"]["Environment"] ?? {}).includes("EBB_SPARK_APPLICATION_ID"),
    );
    expect(network.SubnetIds).toEqual(runFlow!["Properties"]["VpcConfig"]["SubnetIds"]);
  });

  for (const suffix of ["", "InCycle"]) {
    it(`runs a handed-over batch after RunFlow${suffix} with startJobRun.sync, retried and caught, and loops back`, () => {
      const runFlow = states[`RunFlow${suffix}`]!;
      expect(runFlow.ResultPath).toBe("$.run");
      const choice = states[runFlow.Next!]!;
      expect(choice.Type).toBe("Choice");
      expect(choice.Choices).toEqual([
        { Variable: "$.run.sparkRequest", IsPresent: true, Next: `RunSparkBatch${suffix}` },
      ]);
      expect(states[choice.Default!]?.Type).toBe("Succeed");

      const job = states[`RunSparkBatch${suffix}`]!;
      expect(job.Resource).toMatch(/:states:::emr-serverless:startJobRun\.sync$/);
      expect(job.Parameters?.["ApplicationId"]).toContain("SparkEngineApplication");
      expect(job.Parameters?.["ExecutionRoleArn"]).toContain("SparkEngineJobRole");
      const driver = JSON.stringify(job.Parameters?.["JobDriver"]);
      expect(driver).toContain("States.Array('--request', $.run.sparkRequest.uri)");
      // The entry script's sibling modules (ebb_spark_expectations.py, …) ship as one zip.
      expect(driver).toMatch(/--py-files s3:\/\/[^ ]+\.zip/);
      expect(JSON.stringify(job.Parameters?.["ConfigurationOverrides"])).toContain(
        "CloudWatchLoggingConfiguration",
      );
      expect(job.Parameters?.["Name.$"]).toBe("$.run.sparkRequest.name");
      expect(job.ResultPath).toBe("$.run.sparkJob");
      // Bounded: the job by EMR (12 h), the state a little after it.
      expect(job.Parameters?.["ExecutionTimeoutMinutes"]).toBe(720);
      expect(job.TimeoutSeconds).toBe(720 * 60 + 300);
      expect(job.Retry?.flatMap((retry) => retry.ErrorEquals)).toContain("EMRServerless.ThrottlingException");
      // Success and failure both go back to RunFlow: it commits the manifest, or names the failure.
      expect(job.Next).toBe(`RunFlow${suffix}`);
      expect(job.Catch).toEqual([
        { ErrorEquals: ["States.ALL"], Next: `RunFlow${suffix}`, ResultPath: "$.run.sparkFailure" },
      ]);
    });
  }

  it("scopes the job role to the bucket's tables/ and state/ prefixes, and the source bucket's prefix, reading the script asset", () => {
    const statements = statementsOf(template);
    const writes = statements.filter((s) => [s.Action].flat().includes("s3:PutObject"));
    const jobWrites = writes.filter((s) => {
      const text = JSON.stringify(s.Resource);
      return text.includes("/tables/*") && text.includes("/state/*");
    });
    expect(jobWrites).toHaveLength(1);
    expect(JSON.stringify(jobWrites[0]!.Resource)).not.toMatch(/"\/\*"/);
    const sourceReads = statements.filter(
      (s) =>
        JSON.stringify(s.Resource).includes("their-landing-bucket/orders/*") &&
        [s.Action].flat().includes("s3:GetObject"),
    );
    // The task functions' grant and the job role's.
    expect(sourceReads.length).toBeGreaterThanOrEqual(2);
  });

  it("lets the state machine run jobs on this application only, pass the job role only, and keep the .sync rule", () => {
    const statements = statementsOf(template);
    const start = statements.find((s) => [s.Action].flat().includes("emr-serverless:StartJobRun"))!;
    expect([start.Action].flat().sort()).toEqual([
      "emr-serverless:CancelJobRun",
      "emr-serverless:GetJobRun",
      "emr-serverless:StartJobRun",
    ]);
    const resources = JSON.stringify(start.Resource);
    expect(resources).toContain("/applications/");
    expect(resources).toContain("SparkEngineApplication");
    expect(resources).not.toContain("/applications/*");
    const pass = statements.filter((s) => [s.Action].flat().includes("iam:PassRole"));
    expect(pass).toHaveLength(1);
    expect(JSON.stringify(pass[0]!.Resource)).toContain("SparkEngineJobRole");
    const rule = statements.find((s) => [s.Action].flat().includes("events:PutRule"))!;
    expect(JSON.stringify(rule.Resource)).toContain("rule/StepFunctionsGetEventsForEMRServerlessJobRule");
  });
});

describe("the Ebb construct with sparkEngine off (the default)", () => {
  const template = ebbTemplate();
  const states = machineStates(template);

  it("creates no application, no Spark state, and RunFlow's answer is discarded as before", () => {
    template.resourceCountIs("AWS::EMRServerless::Application", 0);
    expect(Object.keys(states).filter((name) => /Spark/.test(name))).toEqual([]);
    expect(states["RunFlow"]?.ResultPath).toBeNull();
    expect(statementsOf(template).some((s) => [s.Action].flat().includes("emr-serverless:StartJobRun"))).toBe(
      false,
    );
  });
});
