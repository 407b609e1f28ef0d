import { App, Stack } from "aws-cdk-lib";
import { Match, Template } from "aws-cdk-lib/assertions";
import * as s3 from "aws-cdk-lib/aws-s3";
import { describe, expect, it } from "vitest";
import { Ebb } from "../../../infra/aws/ebb.ts";

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
