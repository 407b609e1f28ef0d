import * as ec2 from "aws-cdk-lib/aws-ec2";
import type * as emrserverless from "aws-cdk-lib/aws-emrserverless";
import type * as iam from "aws-cdk-lib/aws-iam";
import type * as secretsmanager from "aws-cdk-lib/aws-secretsmanager";
import type { Construct } from "constructs";

/**
 * What a Spark batch reaches beyond the bucket: brokers inside a VPC (the application's network
 * configuration, so a `kafka` batch's driver dials MSK as the update tasks do) and the secrets a
 * `kafka` source names by environment variable (`password_env`, `tls.ca_env`), put into the
 * driver's environment by EMR Serverless itself from Secrets Manager (`EMR.secret@`), so no value
 * is written into the template, a job run's parameters or a log.
 */

export interface SparkJobNetwork {
  /** The VPC the brokers are in: the application's workers run in it. */
  readonly vpc: ec2.IVpc;
  /** Where in the VPC (they also reach S3 and Maven Central from there). @default the VPC's private subnets */
  readonly subnets?: ec2.SubnetSelection;
  /** Security groups the brokers admit. @default one new group, all outbound allowed */
  readonly securityGroups?: readonly ec2.ISecurityGroup[];
}

/** An environment variable's name, as a source's `password_env` or `ca_env` spells it. */
const ENVIRONMENT_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** The application's `networkConfiguration` (a new security group when none is given). */
export function sparkNetworkConfiguration(
  scope: Construct,
  network: SparkJobNetwork,
): emrserverless.CfnApplication.NetworkConfigurationProperty {
  const subnets = network.vpc.selectSubnets(
    network.subnets ?? { subnetType: ec2.SubnetType.PRIVATE_WITH_EGRESS },
  );
  const groups = network.securityGroups?.length
    ? network.securityGroups
    : [
        new ec2.SecurityGroup(scope, "JobSecurityGroup", {
          vpc: network.vpc,
          description: "Ebb Spark batches: out to the brokers, S3 and Maven Central",
          allowAllOutbound: true,
        }),
      ];
  return {
    subnetIds: subnets.subnetIds,
    securityGroupIds: groups.map((group) => group.securityGroupId),
  };
}

/**
 * The application's `runtimeConfiguration` putting each secret into the driver's environment under
 * its name, and the job role's read of each; undefined without secrets.
 */
export function sparkSecretEnvironment(
  secrets: Readonly<Record<string, secretsmanager.ISecret>>,
  jobRole: iam.IGrantable,
): emrserverless.CfnApplication.ConfigurationObjectProperty[] | undefined {
  const entries = Object.entries(secrets);
  if (entries.length === 0) return undefined;
  const properties: Record<string, string> = {};
  for (const [name, secret] of entries) {
    if (!ENVIRONMENT_NAME.test(name))
      throw new Error(
        `sparkEngine.environmentSecrets: "${name}" is not an environment variable's name (letters, digits and _, not starting with a digit); use the name the kafka source's password_env or tls.ca_env gives`,
      );
    properties[`spark.emr-serverless.driverEnv.${name}`] = `EMR.secret@${secret.secretName}`;
    secret.grantRead(jobRole);
  }
  return [{ classification: "spark-defaults", properties }];
}
