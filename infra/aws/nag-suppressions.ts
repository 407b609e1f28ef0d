import { Stack, type CfnElement } from "aws-cdk-lib";
import { NagSuppressions, type NagPackSuppression } from "cdk-nag";
import type { IConstruct } from "constructs";
import type { Ebb } from "./ebb.ts";

/**
 * The cdk-nag (AwsSolutions) findings Ebb accepts, each with its reason, so a nag run over a stack
 * holding Ebb shows only what is new. Everything the pack found that was real is fixed in the
 * constructs instead (test/unit/infra/nag.test.ts runs the pack). Wildcard suppressions name the exact
 * resource they excuse (`appliesTo`), never a whole rule for the whole construct.
 */
export function suppressAcceptedNagFindings(ebb: Ebb, options: { readonly webUiDomain: boolean }): void {
  const { storage } = ebb;
  /** How cdk-nag writes the ARN of a resource of this stack: `Resource::<LogicalId.Arn>`. */
  const arn = (resource: IConstruct) => {
    const logicalId: unknown = Stack.of(ebb).resolve((resource.node.defaultChild as CfnElement).logicalId);
    return `Resource::<${String(logicalId)}.Arn>`;
  };

  for (const fn of ebb.functions.values()) {
    NagSuppressions.addResourceSuppressions(
      fn,
      [
        {
          id: "AwsSolutions-L1",
          reason:
            "Node.js 22 is pinned on purpose: the bundle targets node22 and DuckDB's native binding is built and tested for it (function-defaults.ts); the runtime moves with both",
        },
        {
          id: "AwsSolutions-IAM4",
          reason:
            "AWSLambdaBasicExecutionRole grants only the CloudWatch Logs writes of the function's own logs",
          appliesTo: [
            "Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole",
          ],
        },
        {
          id: "AwsSolutions-IAM5",
          reason:
            "Least privilege by bucket prefix (function-access.ts): Delta tables, flow state and statement answers are objects under their prefix, named at run time; pipelines are created through the API after deploy, so no narrower fixed ARN exists",
          appliesTo: ["tables/*", "state/*", "statements/*"].map(
            (prefix) => `${arn(storage.bucket)}/${prefix}`,
          ),
        },
        {
          id: "AwsSolutions-IAM5",
          reason:
            "X-Ray active tracing (the construct's `tracing`): xray:PutTraceSegments and PutTelemetryRecords accept only Resource '*'",
          appliesTo: ["Resource::*"],
        },
        {
          id: "AwsSolutions-IAM5",
          reason:
            "Queries by event type go through the event log's global secondary index, whose ARN is the table's ARN /index/<name>; the grant is to this one table's indexes",
          appliesTo: [`${arn(storage.eventLog)}/index/*`],
        },
        {
          id: "AwsSolutions-IAM5",
          reason:
            "Start and stop act on the executions of Ebb's one state machine, whose names are the update ids chosen at run time",
          appliesTo: [
            {
              regex:
                "/^Resource::arn:<AWS::Partition>:states:<AWS::Region>:<AWS::AccountId>:execution:.*:\\*$/g",
            },
          ],
        },
      ],
      true,
    );
  }

  const machineRole = ebb.stateMachine.role;
  NagSuppressions.addResourceSuppressions(
    machineRole,
    [
      {
        id: "AwsSolutions-IAM5",
        reason:
          "Step Functions invokes each task function by ARN with a version or alias qualifier (<arn>:*), as the CDK's LambdaInvoke grants",
        appliesTo: [...ebb.functions.values()]
          .filter((fn) => fn.node.id.startsWith("Task"))
          .map((fn) => `${arn(fn)}:*`),
      },
      {
        id: "AwsSolutions-IAM5",
        reason:
          "X-Ray tracing (xray:PutTraceSegments, PutTelemetryRecords, GetSampling*) and CloudWatch Logs delivery (logs:CreateLogDelivery and its kin) accept only Resource '*'",
        appliesTo: ["Resource::*"],
      },
    ],
    true,
  );

  NagSuppressions.addResourceSuppressions(
    ebb.api,
    [
      {
        id: "AwsSolutions-COG4",
        reason:
          "Every method uses AWS_IAM (SigV4): the CLI, SDKs and the web UI (Cognito identity pool credentials) sign each call; a user-pool authorizer would be a second auth",
      },
      {
        id: "AwsSolutions-APIG2",
        reason:
          "Each handler validates its request against the route's contract (shared/api/route-contracts.ts) and answers in the Databricks error shape clients read (INVALID_PARAMETER_VALUE naming the field); an API Gateway validator would answer a bare 400 of its own first",
      },
      {
        id: "AwsSolutions-APIG3",
        reason:
          "A WAF web ACL is the deployer's (per account, billed per rule); the API is IAM-signed on every method and throttled per stage (apiThrottle)",
      },
      {
        id: "AwsSolutions-IAM4",
        reason:
          "AmazonAPIGatewayPushToCloudWatchLogs is the account's API Gateway logging role AWS prescribes for access and execution logs",
        appliesTo: [
          "Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AmazonAPIGatewayPushToCloudWatchLogs",
        ],
      },
    ],
    true,
  );

  NagSuppressions.addResourceSuppressions(
    ebb.node.findChild("CaptureDeadLetters"),
    [{ id: "AwsSolutions-SQS3", reason: "The queue is itself a dead-letter queue: the capture schedule's" }],
    true,
  );

  NagSuppressions.addResourceSuppressions(
    storage.accessLogs,
    [
      {
        id: "AwsSolutions-S1",
        reason: "This is the access-log bucket; logging its own requests into itself would loop",
      },
    ],
    true,
  );

  if (ebb.webUi) suppressWebUiFindings(ebb.webUi, options.webUiDomain);
}

function suppressWebUiFindings(webUi: NonNullable<Ebb["webUi"]>, ownDomain: boolean): void {
  const distribution: NagPackSuppression[] = [
    {
      id: "AwsSolutions-CFR1",
      reason: "Ebb serves its users wherever they are; a geo restriction is the deployer's",
    },
    {
      id: "AwsSolutions-CFR2",
      reason:
        "A WAF web ACL is the deployer's (us-east-1, billed per rule); the app is static files and its API calls are IAM-signed",
    },
  ];
  if (!ownDomain) {
    distribution.push({
      id: "AwsSolutions-CFR4",
      reason:
        "Without webUiDomain the distribution serves *.cloudfront.net with CloudFront's own certificate, whose security policy CloudFront fixes at TLSv1 (browsers still negotiate TLS 1.2/1.3); give webUiDomain to enforce TLSv1.2_2021",
    });
  }
  NagSuppressions.addResourceSuppressions(webUi.distribution, distribution, true);

  NagSuppressions.addResourceSuppressions(
    webUi.signIn.userPool,
    [
      {
        id: "AwsSolutions-COG1",
        reason:
          "Length over composition (NIST SP 800-63B): at least 12 characters, no forced symbol; users are created by an administrator",
      },
      {
        id: "AwsSolutions-COG2",
        reason: "TOTP MFA is offered to every user; requiring it is the deployer's choice (mfa: REQUIRED)",
      },
      {
        id: "AwsSolutions-COG3",
        reason:
          "Threat protection (AdvancedSecurityMode ENFORCED) needs Cognito's Plus feature plan, billed per active user: the deployer's choice",
      },
    ],
    true,
  );
  NagSuppressions.addResourceSuppressions(
    webUi.signIn.identityPool.authenticatedRole,
    [
      {
        id: "AwsSolutions-IAM5",
        reason:
          "A signed-in user may call every method of Ebb's API (stage/method/path), and nothing else; the API has one auth, IAM",
        appliesTo: [
          {
            regex:
              "/^Resource::arn:<AWS::Partition>:execute-api:<AWS::Region>:<AWS::AccountId>:<.*>\\/\\*\\/\\*\\/\\*$/g",
          },
        ],
      },
    ],
    true,
  );

  // The BucketDeployment's handler is a singleton of the stack, not a child of the web UI.
  const stack = Stack.of(webUi);
  for (const child of stack.node.children) {
    if (!child.node.id.startsWith("Custom::CDKBucketDeployment")) continue;
    NagSuppressions.addResourceSuppressions(
      child,
      [
        {
          id: "AwsSolutions-L1",
          reason: "The CDK's BucketDeployment handler: its runtime is the CDK's, not Ebb's",
        },
        {
          id: "AwsSolutions-IAM4",
          reason: "The CDK's BucketDeployment handler writes its own logs with Lambda's basic execution role",
          appliesTo: [
            "Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole",
          ],
        },
        {
          id: "AwsSolutions-IAM5",
          reason:
            "The CDK's BucketDeployment copies the asset (CDK's asset bucket) into the assets bucket: object-level actions on both, as the CDK grants them",
        },
      ],
      true,
    );
  }
}
