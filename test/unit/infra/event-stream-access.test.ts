import { App, Stack } from "aws-cdk-lib";
import { Template } from "aws-cdk-lib/assertions";
import * as ec2 from "aws-cdk-lib/aws-ec2";
import * as kinesis from "aws-cdk-lib/aws-kinesis";
import { describe, expect, it } from "vitest";
import { Ebb, ENTRY_METADATA, type EbbProps } from "../../../infra/aws/ebb.ts";

/**
 * The construct's event-stream props: the functions that read streams (the update tasks and
 * start-update) get read grants on exactly the Kinesis streams and MSK clusters named, and run in the
 * MSK cluster's VPC; every other function stays outside it with no stream grant.
 */

const ORDERS_ARN = "arn:aws:kinesis:eu-west-1:123456789012:stream/orders";
const CLUSTER_ARN =
  "arn:aws:kafka:eu-west-1:123456789012:cluster/shop/0b1c2d3e-4f50-6172-8394-a5b6c7d8e9f0-1";

type Resource = { Type: string; Properties: Record<string, unknown>; Metadata?: Record<string, unknown> };
type Statement = { Action: string | string[]; Resource: unknown };

function synthesize(props: (stack: Stack) => EbbProps): Record<string, Resource> {
  // Placeholders for the function assets: the template is the same without bundling.
  const app = new App({ context: { "aws:cdk:bundling-stacks": [] } });
  const stack = new Stack(app, "Streams");
  new Ebb(stack, "Ebb", props(stack));
  return Template.fromStack(stack).toJSON()["Resources"] as Record<string, Resource>;
}

/** The function serving `entry`, and every statement its role's policies hold. */
function fn(resources: Record<string, Resource>, entry: string) {
  const [, found] = Object.entries(resources).find(
    ([, r]) => r.Type === "AWS::Lambda::Function" && r.Metadata?.[ENTRY_METADATA] === `functions/${entry}`,
  )!;
  const role = (found.Properties["Role"] as { "Fn::GetAtt": [string, string] })["Fn::GetAtt"][0];
  const statements = Object.values(resources)
    .filter((r) => r.Type === "AWS::IAM::Policy")
    .filter((r) => (r.Properties["Roles"] as { Ref: string }[]).some((ref) => ref.Ref === role))
    .flatMap((r) => (r.Properties["PolicyDocument"] as { Statement: Statement[] }).Statement);
  const actions = (statement: Statement) =>
    Array.isArray(statement.Action) ? statement.Action : [statement.Action];
  return {
    vpc: found.Properties["VpcConfig"] as { SubnetIds: unknown[]; SecurityGroupIds: unknown[] } | undefined,
    /** The resources granted `action`, as JSON text (tokens included). */
    granted: (action: string) =>
      statements.filter((s) => actions(s).includes(action)).map((s) => JSON.stringify(s.Resource)),
  };
}

describe("the construct's event-stream props", () => {
  const resources = synthesize((stack) => {
    const vpc = new ec2.Vpc(stack, "Vpc", { maxAzs: 2, natGateways: 1 });
    const brokers = new ec2.SecurityGroup(stack, "BrokerClients", { vpc });
    return {
      eventStreams: {
        kinesisStreams: [
          new kinesis.Stream(stack, "Clicks"),
          kinesis.Stream.fromStreamArn(stack, "Orders", ORDERS_ARN),
        ],
        msk: {
          clusters: [{ clusterArn: CLUSTER_ARN, topics: ["orders", "payments-*"] }],
          vpc,
          securityGroups: [brokers],
        },
      },
    };
  });

  it("lets the tasks and start-update read the Kinesis streams named, and nothing else", () => {
    for (const entry of ["tasks/run-flow.ts", "tasks/plan-update.ts", "start-update.ts"]) {
      const reader = fn(resources, entry);
      const reads = reader.granted("kinesis:GetRecords");
      expect(
        reads.some((r) => r.includes(ORDERS_ARN)),
        entry,
      ).toBe(true);
      expect(
        reads.some((r) => r.includes(`"Clicks`)),
        entry,
      ).toBe(true);
      expect(reader.granted("kinesis:ListShards").length, entry).toBeGreaterThan(0);
      expect(reader.granted("kinesis:PutRecord"), entry).toEqual([]);
    }
    expect(fn(resources, "list-pipelines.ts").granted("kinesis:GetRecords")).toEqual([]);
  });

  it("grants MSK's IAM sign-in on the cluster and reads on the topics named only", () => {
    const reader = fn(resources, "tasks/run-flow.ts");
    expect(reader.granted("kafka-cluster:Connect")).toEqual([JSON.stringify(CLUSTER_ARN)]);
    const topics = reader.granted("kafka-cluster:ReadData").join(" ");
    expect(topics).toContain(":topic/");
    expect(topics).toContain("/orders");
    expect(topics).toContain("/payments-*");
    expect(reader.granted("kafka-cluster:WriteData")).toEqual([]);
    expect(fn(resources, "get-pipeline.ts").granted("kafka-cluster:Connect")).toEqual([]);
  });

  it("runs the stream readers in the MSK cluster's VPC with the security groups given; the others outside", () => {
    for (const entry of ["tasks/run-flow.ts", "start-update.ts"]) {
      const { vpc } = fn(resources, entry);
      expect(vpc?.SubnetIds, entry).toHaveLength(2);
      expect(JSON.stringify(vpc?.SecurityGroupIds), entry).toContain("BrokerClients");
    }
    expect(fn(resources, "list-pipelines.ts").vpc).toBeUndefined();
  });

  it("puts nothing in a VPC and grants no stream without the props", () => {
    const plain = synthesize(() => ({}));
    const reader = fn(plain, "tasks/run-flow.ts");
    expect(reader.vpc).toBeUndefined();
    expect(reader.granted("kinesis:GetRecords")).toEqual([]);
    expect(reader.granted("kafka-cluster:Connect")).toEqual([]);
  });
});
