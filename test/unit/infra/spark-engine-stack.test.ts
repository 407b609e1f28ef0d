import { App, Stack } from "aws-cdk-lib";
import { Match, Template } from "aws-cdk-lib/assertions";
import * as s3 from "aws-cdk-lib/aws-s3";
import * as sfn from "aws-cdk-lib/aws-stepfunctions";
import { describe, expect, it } from "vitest";
import { EbbSparkEngine, EMR_RELEASE_LABEL } from "../../../infra/aws/ebb-spark-engine.ts";

/**
 * The Spark engine's template: an EMR Serverless application on the pinned release with auto-stop and
 * no warm capacity, a job role scoped to the bucket's prefixes, and a state that runs a batch with
 * Step Functions' own `startJobRun.sync` integration, retried on throttling and caught by the machine.
 */

function synthesize() {
  const app = new App();
  const stack = new Stack(app, "Spark", { env: { account: "123456789012", region: "eu-west-1" } });
  const bucket = new s3.Bucket(stack, "Bucket");
  const engine = new EbbSparkEngine(stack, "SparkEngine", { bucket });
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
