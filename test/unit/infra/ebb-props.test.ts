import { App, Duration, Stack } from "aws-cdk-lib";
import { Match, Template } from "aws-cdk-lib/assertions";
import * as acm from "aws-cdk-lib/aws-certificatemanager";
import * as s3 from "aws-cdk-lib/aws-s3";
import * as sfn from "aws-cdk-lib/aws-stepfunctions";
import { mkdtempSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { Ebb, type EbbProps } from "../../../infra/aws/ebb.ts";

/** The construct's settings a deployer turns: task concurrency and the source buckets it may read. */
const app = new App({ context: { "aws:cdk:bundling-stacks": [] } });
const stack = new Stack(app, "Settings");
const landing = s3.Bucket.fromBucketName(stack, "Landing", "their-landing-bucket");
const ebb = new Ebb(stack, "Ebb", {
  taskConcurrency: 5,
  sourceBuckets: [{ bucket: landing, prefix: "orders/" }],
  apiThrottle: { rateLimit: 7, burstLimit: 9 },
});
const template = Template.fromStack(stack);
const tasks = [...ebb.functions.entries()].filter(([id]) => id.startsWith("Task"));

describe("the Ebb construct's settings", () => {
  it("reserves the concurrency it is given for each task function, and none for the API's", () => {
    expect(tasks.length).toBe(9);
    const reserved = Object.values(template.findResources("AWS::Lambda::Function")).map(
      (fn) =>
        (fn as { Properties: { ReservedConcurrentExecutions?: number } }).Properties
          .ReservedConcurrentExecutions,
    );
    expect(reserved.filter((value) => value === 5)).toHaveLength(9);
    expect(reserved.filter((value) => value !== undefined && value !== 5)).toEqual([]);
  });

  it("lets the task functions read a source bucket outside Ebb's, under its prefix only", () => {
    template.hasResourceProperties("AWS::IAM::Policy", {
      PolicyDocument: {
        Statement: Match.arrayWith([
          Match.objectLike({
            Action: ["s3:GetObject", "s3:GetObjectVersion"],
            Resource: Match.objectLike({
              "Fn::Join": ["", Match.arrayWith([Match.stringLikeRegexp("their-landing-bucket/orders/\\*")])],
            }),
          }),
          Match.objectLike({
            Action: "s3:ListBucket",
            Condition: { StringLike: { "s3:prefix": ["orders/*"] } },
          }),
        ]),
      },
    });
  });

  it("throttles the stage as told", () => {
    template.hasResourceProperties("AWS::ApiGateway::Stage", {
      MethodSettings: [Match.objectLike({ ThrottlingRateLimit: 7, ThrottlingBurstLimit: 9 })],
    });
  });
});

describe("the task functions' size", () => {
  // An app of its own: the first one was synthesized already.
  const sizedApp = new App({ context: { "aws:cdk:bundling-stacks": [] } });
  const sized = new Stack(sizedApp, "Sized");
  const big = new Ebb(sized, "Ebb", {
    taskMemorySize: 10_240,
    taskEphemeralStorageSize: 10_240,
    taskTimeout: Duration.minutes(10),
  });
  const sizedTemplate = Template.fromStack(sized);

  it("sets memory, /tmp and timeout on every task function, and the limits that follow in its environment", () => {
    const taskIds = [...big.functions.keys()].filter((id) => id.startsWith("Task"));
    expect(taskIds).toHaveLength(9);
    const functions = sizedTemplate.findResources("AWS::Lambda::Function", {
      Properties: {
        MemorySize: 10_240,
        EphemeralStorage: { Size: 10_240 },
        Timeout: 600,
        Environment: {
          Variables: Match.objectLike({
            EBB_SQL_MEMORY_LIMIT: "5120MB",
            EBB_SQL_TEMP_LIMIT: "5120MB",
            EBB_SQL_TIMEOUT: "400 seconds",
            EBB_BATCH_MAX_BYTES: String(1280 * 1024 ** 2),
          }),
        },
      },
    });
    expect(Object.keys(functions)).toHaveLength(9);
    // The state machine's tasks wait exactly as long.
    expect(JSON.stringify(sizedTemplate.findResources("AWS::StepFunctions::StateMachine"))).toContain(
      '\\"TimeoutSeconds\\":600',
    );
  });

  it("keeps Lambda's defaults for /tmp and Ebb's for memory and time, with the limits that fit them", () => {
    template.hasResourceProperties("AWS::Lambda::Function", {
      MemorySize: 2048,
      Timeout: 900,
      EphemeralStorage: { Size: 512 },
      Environment: { Variables: Match.objectLike({ EBB_BATCH_MAX_BYTES: String(128 * 1024 ** 2) }) },
    });
  });

  it("refuses a size Lambda does not allow, naming the prop", () => {
    expect(
      () => new Ebb(new Stack(new App(), "TooBig"), "Ebb", { taskEphemeralStorageSize: 20_480 }),
    ).toThrow(
      /^Ebb: taskEphemeralStorageSize must be a whole number from 512 to 10240 MB \(Lambda's range\), not 20480$/,
    );
    expect(
      () => new Ebb(new Stack(new App(), "TooLong"), "Ebb", { taskTimeout: Duration.minutes(20) }),
    ).toThrow(/taskTimeout must be a whole number from 60 to 900 seconds/);
  });
});

/** A stack holding only Ebb with these props, and its task functions' reserved concurrency. */
function withProps(props: EbbProps): { template: Template; reserved: (number | undefined)[] } {
  const app = new App({ context: { "aws:cdk:bundling-stacks": [] } });
  const stack = new Stack(app, "Settings");
  const ebb = new Ebb(stack, "Ebb", props);
  const template = Template.fromStack(stack);
  const reserved = [...ebb.functions.entries()]
    .filter(([id]) => id.startsWith("Task"))
    .map(
      ([, fn]) =>
        (fn.node.defaultChild as { reservedConcurrentExecutions?: number }).reservedConcurrentExecutions,
    );
  return { template, reserved };
}

describe("the Ebb construct's hardening defaults and their props", () => {
  const defaults = withProps({});

  it("reserves no concurrency by default (a new account could not deploy), the given amount when told", () => {
    expect(defaults.reserved).toEqual(Array(9).fill(undefined));
    expect(withProps({ taskConcurrency: 32 }).reserved).toEqual(Array(9).fill(32));
  });

  it("keeps noncurrent versions and access logs as long as told", () => {
    const { template } = withProps({
      noncurrentVersionRetention: Duration.days(7),
      accessLogRetention: Duration.days(400),
    });
    template.hasResourceProperties("AWS::S3::Bucket", {
      LifecycleConfiguration: {
        Rules: Match.arrayWith([
          Match.objectLike({ Id: "NoncurrentVersions", NoncurrentVersionExpiration: { NoncurrentDays: 7 } }),
        ]),
      },
    });
    template.hasResourceProperties("AWS::S3::Bucket", {
      LifecycleConfiguration: { Rules: [Match.objectLike({ Id: "AccessLogs", ExpirationInDays: 400 })] },
    });
  });

  it("logs the state machine at the level it is given", () => {
    withProps({ stateMachineLogLevel: sfn.LogLevel.ERROR }).template.hasResourceProperties(
      "AWS::StepFunctions::StateMachine",
      { LoggingConfiguration: Match.objectLike({ Level: "ERROR", IncludeExecutionData: false }) },
    );
  });

  it("serves the web UI under its own domain with TLSv1.2_2021, the sign-in returning there", () => {
    const assets = mkdtempSync(path.join(os.tmpdir(), "ebb-web-ui-"));
    writeFileSync(path.join(assets, "index.html"), "<!doctype html><title>Ebb</title>");
    const app = new App({ context: { "aws:cdk:bundling-stacks": [] } });
    const stack = new Stack(app, "OwnDomain");
    const certificateArn =
      "arn:aws:acm:us-east-1:123456789012:certificate/00000000-0000-0000-0000-000000000000";
    new Ebb(stack, "Ebb", {
      webUiAssets: assets,
      webUiDomain: {
        domainName: "ebb.example.com",
        certificate: acm.Certificate.fromCertificateArn(stack, "Certificate", certificateArn),
      },
    });
    const template = Template.fromStack(stack);
    template.hasResourceProperties("AWS::CloudFront::Distribution", {
      DistributionConfig: Match.objectLike({
        Aliases: ["ebb.example.com"],
        ViewerCertificate: Match.objectLike({
          AcmCertificateArn: certificateArn,
          MinimumProtocolVersion: "TLSv1.2_2021",
          SslSupportMethod: "sni-only",
        }),
      }),
    });
    template.hasResourceProperties("AWS::Cognito::UserPoolClient", {
      CallbackURLs: ["https://ebb.example.com/"],
    });
  });
});
