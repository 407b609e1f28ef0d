import { App, Stack } from "aws-cdk-lib";
import * as ec2 from "aws-cdk-lib/aws-ec2";
import * as kinesis from "aws-cdk-lib/aws-kinesis";
import { Ebb } from "../../infra/aws/ebb.ts";

/**
 * A CDK app whose pipelines read the Kinesis stream of `kinesis-clicks.yaml` and the MSK cluster of
 * `kafka-orders.yaml`: the update tasks and start-update get read grants on both and run in the
 * cluster's VPC, reaching S3 and DynamoDB through gateway endpoints. Synthesize it with
 * `npx cdk synth --app "npx tsx examples/event-streams/stream-readers-app.ts"`.
 */
const app = new App();
const stack = new Stack(app, "EbbStreams", { env: { region: "eu-west-1" } });
// The cluster's VPC, by its ids (no lookup, so the app synthesizes offline).
const vpc = ec2.Vpc.fromVpcAttributes(stack, "Vpc", {
  vpcId: "vpc-0123456789abcdef0",
  availabilityZones: ["eu-west-1a", "eu-west-1b"],
  privateSubnetIds: ["subnet-0123456789abcdef0", "subnet-0fedcba9876543210"],
  privateSubnetRouteTableIds: ["rtb-0123456789abcdef0", "rtb-0fedcba9876543210"],
});
vpc.addGatewayEndpoint("S3", { service: ec2.GatewayVpcEndpointAwsService.S3 });
vpc.addGatewayEndpoint("DynamoDb", { service: ec2.GatewayVpcEndpointAwsService.DYNAMODB });
new Ebb(stack, "Ebb", {
  eventStreams: {
    kinesisStreams: [
      kinesis.Stream.fromStreamArn(stack, "Clicks", "arn:aws:kinesis:eu-west-1:123456789012:stream/clicks"),
    ],
    msk: {
      clusters: [
        {
          clusterArn:
            "arn:aws:kafka:eu-west-1:123456789012:cluster/shop/0b1c2d3e-4f50-6172-8394-a5b6c7d8e9f0-1",
          topics: ["orders"],
        },
      ],
      vpc,
      securityGroups: [ec2.SecurityGroup.fromSecurityGroupId(stack, "MskClients", "sg-0123456789abcdef0")],
    },
  },
});
