import { App, Stack } from "aws-cdk-lib";
import { Match, Template } from "aws-cdk-lib/assertions";
import * as ec2 from "aws-cdk-lib/aws-ec2";
import * as s3 from "aws-cdk-lib/aws-s3";
import * as secretsmanager from "aws-cdk-lib/aws-secretsmanager";
import { describe, expect, it } from "vitest";
import { EbbSparkEngine, type EbbSparkEngineProps } from "../../../infra/aws/ebb-spark-engine.ts";

/**
 * What a Spark batch reaches beyond the bucket (spark-job-reach.ts): the application's workers in a
 * VPC when given one (the construct gives its MSK access: spark-engine-stack.test.ts); a Kafka source's `password_env`/`tls.ca_env` secrets reach the driver's
 * environment through EMR Serverless' `EMR.secret@`, never as a value, and the job role may read
 * those secrets only.
 */

function engineTemplate(props: (stack: Stack) => Omit<EbbSparkEngineProps, "bucket">) {
  const app = new App();
  const stack = new Stack(app, "Spark", { env: { account: "123456789012", region: "eu-west-1" } });
  new EbbSparkEngine(stack, "SparkEngine", { bucket: new s3.Bucket(stack, "Bucket"), ...props(stack) });
  return Template.fromStack(stack);
}

describe("a Spark batch's reach", () => {
  it("stays on the service's own network without one given, with no runtime configuration", () => {
    const template = engineTemplate(() => ({}));
    template.hasResourceProperties("AWS::EMRServerless::Application", {
      NetworkConfiguration: Match.absent(),
      RuntimeConfiguration: Match.absent(),
    });
  });

  it("runs in the VPC's private subnets with a new all-outbound group when none is given", () => {
    const template = engineTemplate((stack) => ({
      network: { vpc: new ec2.Vpc(stack, "Vpc", { maxAzs: 2, natGateways: 1 }) },
    }));
    const [application] = Object.values(template.findResources("AWS::EMRServerless::Application"));
    const network = application!["Properties"]["NetworkConfiguration"];
    expect(JSON.stringify(network.SubnetIds)).toMatch(/PrivateSubnet1.*PrivateSubnet2/);
    expect(network.SecurityGroupIds).toEqual([
      { "Fn::GetAtt": [expect.stringMatching(/JobSecurityGroup/), "GroupId"] },
    ]);
    template.hasResourceProperties("AWS::EC2::SecurityGroup", {
      GroupDescription: Match.stringLikeRegexp("Ebb Spark batches"),
      SecurityGroupEgress: [Match.objectLike({ CidrIp: "0.0.0.0/0" })],
    });
  });

  it("puts each secret into the driver's environment by reference and lets the job role read it only", () => {
    const template = engineTemplate((stack) => ({
      environmentSecrets: {
        KAFKA_PASSWORD: new secretsmanager.Secret(stack, "KafkaPassword"),
        KAFKA_CA: secretsmanager.Secret.fromSecretNameV2(stack, "KafkaCa", "shop/kafka-ca"),
      },
    }));
    const [application] = Object.values(template.findResources("AWS::EMRServerless::Application"));
    const [config] = application!["Properties"]["RuntimeConfiguration"];
    expect(config.Classification).toBe("spark-defaults");
    expect(config.Properties["spark.emr-serverless.driverEnv.KAFKA_CA"]).toBe("EMR.secret@shop/kafka-ca");
    const password = JSON.stringify(config.Properties["spark.emr-serverless.driverEnv.KAFKA_PASSWORD"]);
    expect(password).toMatch(/EMR\.secret@/);
    expect(password).toMatch(/KafkaPassword/);
    const reads = Object.values(template.findResources("AWS::IAM::Policy"))
      .flatMap(
        (p) => p["Properties"]["PolicyDocument"]["Statement"] as { Action: unknown; Resource: unknown }[],
      )
      .filter((s) => [s.Action].flat().includes("secretsmanager:GetSecretValue"))
      .map((s) => JSON.stringify(s.Resource));
    expect(reads).toHaveLength(2);
    expect(reads.join(" ")).toMatch(/KafkaPassword/);
    expect(reads.join(" ")).toMatch(/secret:shop\/kafka-ca/);
  });

  it("refuses a secret under a name no environment variable can have", () => {
    expect(() =>
      engineTemplate((stack) => ({
        environmentSecrets: { "KAFKA-PASSWORD": new secretsmanager.Secret(stack, "KafkaPassword") },
      })),
    ).toThrow(/"KAFKA-PASSWORD" is not an environment variable's name.*password_env/);
  });
});
