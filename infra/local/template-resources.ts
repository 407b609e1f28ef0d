import type { CreateTableCommandInput } from "@aws-sdk/client-dynamodb";
import { z } from "zod";
import type { CfnTemplate } from "../aws/synthesize.ts";
import { ProvisioningError } from "./errors.ts";

/**
 * Reads the buckets and DynamoDB tables out of a synthesized CloudFormation template, as the inputs
 * that create them in the stand-ins. Pure: the template is the one source of every table's shape, so
 * local and AWS cannot disagree. Only literal property values are read; an intrinsic (`Ref`,
 * `Fn::Join`) where a name or key is expected is an error, not a guess.
 */

export interface BucketSpec {
  readonly logicalId: string;
  readonly bucketName: string;
}

export interface TableSpec {
  readonly logicalId: string;
  readonly input: CreateTableCommandInput & { TableName: string };
  /** The attribute DynamoDB expires items by, when TTL is enabled. */
  readonly ttlAttribute?: string;
}

const keySchema = z.array(z.object({ AttributeName: z.string(), KeyType: z.enum(["HASH", "RANGE"]) })).min(1);
const throughput = z.object({ ReadCapacityUnits: z.number(), WriteCapacityUnits: z.number() });
const projection = z.object({
  ProjectionType: z.enum(["ALL", "KEYS_ONLY", "INCLUDE"]).optional(),
  NonKeyAttributes: z.array(z.string()).optional(),
});
const index = z.object({ IndexName: z.string(), KeySchema: keySchema, Projection: projection });

/** The properties of `AWS::DynamoDB::Table` that decide its shape; the rest has no local meaning. */
const cfnTable = z.object({
  TableName: z.string().optional(),
  KeySchema: keySchema,
  AttributeDefinitions: z.array(
    z.object({ AttributeName: z.string(), AttributeType: z.enum(["S", "N", "B"]) }),
  ),
  // CloudFormation's default.
  BillingMode: z.enum(["PAY_PER_REQUEST", "PROVISIONED"]).default("PROVISIONED"),
  ProvisionedThroughput: throughput.optional(),
  GlobalSecondaryIndexes: z.array(index.extend({ ProvisionedThroughput: throughput.optional() })).optional(),
  LocalSecondaryIndexes: z.array(index).optional(),
  StreamSpecification: z
    .object({ StreamViewType: z.enum(["KEYS_ONLY", "NEW_IMAGE", "OLD_IMAGE", "NEW_AND_OLD_IMAGES"]) })
    .optional(),
  TimeToLiveSpecification: z.object({ AttributeName: z.string(), Enabled: z.boolean() }).optional(),
});

const cfnBucket = z.object({ BucketName: z.string().optional() });

/** Every bucket and table of the template, with the physical names they get locally. */
export function readTemplateResources(
  template: CfnTemplate,
  stackName: string,
): { buckets: BucketSpec[]; tables: TableSpec[] } {
  const buckets: BucketSpec[] = [];
  const tables: TableSpec[] = [];
  for (const [logicalId, resource] of Object.entries(template.Resources)) {
    if (resource.Type === "AWS::S3::Bucket") {
      const props = parse(cfnBucket, logicalId, resource);
      buckets.push({ logicalId, bucketName: props.BucketName ?? localBucketName(stackName, logicalId) });
    } else if (resource.Type === "AWS::DynamoDB::Table") {
      tables.push(tableSpec(logicalId, parse(cfnTable, logicalId, resource), stackName));
    }
  }
  return { buckets, tables };
}

/**
 * The name CloudFormation would generate, minus its random suffix: `<stack>-<logicalId>`. Stable, so a
 * kept data folder finds its tables again; lower-cased for a bucket, as S3 requires.
 */
export function localTableName(stackName: string, logicalId: string): string {
  return `${stackName}-${logicalId}`;
}

export function localBucketName(stackName: string, logicalId: string): string {
  return `${stackName}-${logicalId}`.toLowerCase().slice(0, 63);
}

function tableSpec(logicalId: string, props: z.infer<typeof cfnTable>, stackName: string): TableSpec {
  const provisioned = props.BillingMode === "PROVISIONED";
  const needThroughput = (value: z.infer<typeof throughput> | undefined, where: string) => {
    if (provisioned && !value) {
      throw new ProvisioningError(
        `${logicalId}: ${where} has BillingMode PROVISIONED but no ProvisionedThroughput`,
      );
    }
    return provisioned ? { ProvisionedThroughput: value } : {};
  };
  const ttl = props.TimeToLiveSpecification;
  return {
    logicalId,
    input: {
      TableName: props.TableName ?? localTableName(stackName, logicalId),
      KeySchema: props.KeySchema,
      AttributeDefinitions: props.AttributeDefinitions,
      BillingMode: props.BillingMode,
      ...needThroughput(props.ProvisionedThroughput, "the table"),
      ...(props.GlobalSecondaryIndexes
        ? {
            GlobalSecondaryIndexes: props.GlobalSecondaryIndexes.map(({ ProvisionedThroughput, ...gsi }) => ({
              ...gsi,
              ...needThroughput(ProvisionedThroughput, `index ${gsi.IndexName}`),
            })),
          }
        : {}),
      ...(props.LocalSecondaryIndexes ? { LocalSecondaryIndexes: props.LocalSecondaryIndexes } : {}),
      ...(props.StreamSpecification
        ? { StreamSpecification: { StreamEnabled: true, ...props.StreamSpecification } }
        : {}),
    },
    ...(ttl?.Enabled ? { ttlAttribute: ttl.AttributeName } : {}),
  };
}

function parse<T extends z.ZodType>(
  schema: T,
  logicalId: string,
  resource: CfnTemplate["Resources"][string],
): z.infer<T> {
  const result = schema.safeParse(resource.Properties ?? {});
  if (result.success) return result.data;
  const issues = result.error.issues.map((issue) => `${issue.path.join(".")}: ${issue.message}`).join("; ");
  throw new ProvisioningError(
    `${logicalId} (${resource.Type}) cannot be created locally: ${issues}. ` +
      "Local provisioning reads literal values only; give this property a plain value in the stack.",
  );
}
