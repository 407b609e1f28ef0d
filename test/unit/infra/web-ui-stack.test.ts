import { mkdtempSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { Match, Template } from "aws-cdk-lib/assertions";
import { describe, expect, it } from "vitest";
import { buildStack } from "../../../infra/aws/synthesize.ts";

// The web UI on AWS: a private bucket behind CloudFront (origin access control), the app for every
// route, the API under /api/* of the same origin, and a Cognito sign-in that yields IAM credentials.
const assets = mkdtempSync(path.join(os.tmpdir(), "ebb-web-ui-"));
writeFileSync(path.join(assets, "index.html"), "<!doctype html><title>Ebb</title>");
const template = Template.fromStack(buildStack(undefined, { webUiAssets: assets }).stack);

describe("web UI stack", () => {
  it("keeps the assets in a private, encrypted, TLS-only bucket", () => {
    template.hasResourceProperties("AWS::S3::Bucket", {
      PublicAccessBlockConfiguration: {
        BlockPublicAcls: true,
        BlockPublicPolicy: true,
        IgnorePublicAcls: true,
        RestrictPublicBuckets: true,
      },
      BucketEncryption: Match.objectLike({}),
    });
    template.hasResourceProperties("AWS::S3::BucketPolicy", {
      PolicyDocument: Match.objectLike({
        Statement: Match.arrayWith([
          Match.objectLike({ Effect: "Deny", Condition: { Bool: { "aws:SecureTransport": "false" } } }),
          Match.objectLike({ Effect: "Allow", Principal: { Service: "cloudfront.amazonaws.com" } }),
        ]),
      }),
    });
  });

  it("logs the assets bucket's requests and the distribution's to the access-log bucket", () => {
    const [logsId] = Object.entries(template.findResources("AWS::S3::Bucket")).find(
      ([, bucket]) => bucket["Properties"]["LifecycleConfiguration"]?.["Rules"]?.[0]?.["Id"] === "AccessLogs",
    )!;
    template.hasResourceProperties("AWS::S3::Bucket", {
      LoggingConfiguration: { DestinationBucketName: { Ref: logsId }, LogFilePrefix: "s3/web-ui-assets/" },
    });
    template.hasResourceProperties("AWS::CloudFront::Distribution", {
      DistributionConfig: Match.objectLike({
        Logging: { Bucket: { "Fn::GetAtt": [logsId, "RegionalDomainName"] }, Prefix: "cloudfront/web-ui/" },
      }),
    });
  });

  it("keeps CloudFront's own certificate and *.cloudfront.net domain when given no domain of its own", () => {
    template.hasResourceProperties("AWS::CloudFront::Distribution", {
      DistributionConfig: Match.objectLike({ Aliases: Match.absent(), ViewerCertificate: Match.absent() }),
    });
  });

  it("serves it over HTTPS through origin access control, answering index.html for app routes", () => {
    template.resourceCountIs("AWS::CloudFront::OriginAccessControl", 1);
    template.hasResourceProperties("AWS::CloudFront::Distribution", {
      DistributionConfig: Match.objectLike({
        DefaultRootObject: "index.html",
        DefaultCacheBehavior: Match.objectLike({ ViewerProtocolPolicy: "redirect-to-https" }),
        CustomErrorResponses: [
          Match.objectLike({ ErrorCode: 403, ResponseCode: 200, ResponsePagePath: "/index.html" }),
          Match.objectLike({ ErrorCode: 404, ResponseCode: 200, ResponsePagePath: "/index.html" }),
        ],
      }),
    });
    template.hasResourceProperties("AWS::CloudFront::ResponseHeadersPolicy", {
      ResponseHeadersPolicyConfig: Match.objectLike({
        SecurityHeadersConfig: Match.objectLike({
          ContentSecurityPolicy: Match.objectLike({
            ContentSecurityPolicy: Match.stringLikeRegexp("default-src 'self'"),
          }),
        }),
      }),
    });
    template.hasOutput("WebUiUrl", {});
  });

  it("deploys the built app with a config naming the API", () => {
    template.resourceCountIs("Custom::CDKBucketDeployment", 1);
  });

  it("forwards /api/* to the API uncached, with the viewer's headers but not its Host (SigV4 holds)", () => {
    const [distribution] = Object.values(template.findResources("AWS::CloudFront::Distribution"));
    const config = distribution!["Properties"]["DistributionConfig"];
    const behavior = config.CacheBehaviors.find((b: { PathPattern: string }) => b.PathPattern === "/api/*");
    expect(behavior).toMatchObject({
      ViewerProtocolPolicy: "https-only",
      AllowedMethods: ["GET", "HEAD", "OPTIONS", "PUT", "PATCH", "POST", "DELETE"],
      // The managed CachingDisabled and AllViewerExceptHostHeader policies.
      CachePolicyId: "4135ea2d-6df8-44a3-9df3-4b5a84be39ad",
      OriginRequestPolicyId: "b689b0a8-53d0-40ab-baf2-68738e2966ac",
    });
    const origin = config.Origins.find((o: { Id: string }) => o.Id === behavior.TargetOriginId);
    // The stage, cut from the API's URL at deploy time: the path the app signs ("/ebb" + path).
    expect(JSON.stringify(origin.OriginPath)).toContain("Fn::Split");
    expect(origin.CustomOriginConfig).toMatchObject({ OriginProtocolPolicy: "https-only" });
    template.hasResourceProperties("AWS::CloudFront::ResponseHeadersPolicy", {
      ResponseHeadersPolicyConfig: Match.objectLike({
        SecurityHeadersConfig: Match.objectLike({
          ContentSecurityPolicy: Match.objectLike({
            ContentSecurityPolicy: Match.stringLikeRegexp(
              "connect-src 'self' https://\\*\\.amazoncognito\\.com https://cognito-identity\\.\\*\\.amazonaws\\.com;",
            ),
          }),
        }),
      }),
    });
  });

  it("signs users in with Cognito: no self sign-up, a public code-grant client back to the app, IAM credentials that may only invoke the API", () => {
    template.hasResourceProperties("AWS::Cognito::UserPool", {
      AdminCreateUserConfig: { AllowAdminCreateUserOnly: true },
      Policies: { PasswordPolicy: Match.objectLike({ MinimumLength: 12 }) },
    });
    template.hasResourceProperties("AWS::Cognito::UserPoolClient", {
      GenerateSecret: false,
      AllowedOAuthFlows: ["code"],
      AllowedOAuthFlowsUserPoolClient: true,
      AllowedOAuthScopes: ["openid", "email", "profile"],
      SupportedIdentityProviders: ["COGNITO"],
      PreventUserExistenceErrors: "ENABLED",
      CallbackURLs: [
        {
          "Fn::Join": [
            "",
            ["https://", { "Fn::GetAtt": [Match.stringLikeRegexp("Distribution"), "DomainName"] }, "/"],
          ],
        },
      ],
    });
    template.resourceCountIs("AWS::Cognito::UserPoolDomain", 1);
    template.hasResourceProperties("AWS::Cognito::IdentityPool", { AllowUnauthenticatedIdentities: false });
    const invoke = Object.values(template.findResources("AWS::IAM::Policy")).filter((policy) =>
      JSON.stringify(policy["Properties"]["PolicyDocument"]).includes("execute-api:Invoke"),
    );
    expect(invoke).toHaveLength(1);
    const statements = invoke[0]!["Properties"]["PolicyDocument"]["Statement"];
    expect(statements).toEqual([
      expect.objectContaining({ Action: "execute-api:Invoke", Effect: "Allow", Resource: expect.anything() }),
    ]);
    const role = invoke[0]!["Properties"]["Roles"][0]["Ref"] as string;
    const trust = template.findResources("AWS::IAM::Role")[role]!["Properties"]["AssumeRolePolicyDocument"];
    expect(JSON.stringify(trust)).toContain('"cognito-identity.amazonaws.com:amr":"authenticated"');
  });

  it("is not part of the stack without assets (the local runtime provisions that one)", () => {
    const plain = Template.fromStack(buildStack().stack);
    expect(Object.keys(plain.findResources("AWS::CloudFront::Distribution"))).toEqual([]);
  });
});
