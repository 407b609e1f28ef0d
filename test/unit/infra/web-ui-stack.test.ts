import { mkdtempSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { Match, Template } from "aws-cdk-lib/assertions";
import { describe, expect, it } from "vitest";
import { buildStack } from "../../../infra/aws/synthesize.ts";

// The web UI on AWS: a private bucket behind CloudFront (origin access control), the app for every route.
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

  it("is not part of the stack without assets (the local runtime provisions that one)", () => {
    const plain = Template.fromStack(buildStack().stack);
    expect(Object.keys(plain.findResources("AWS::CloudFront::Distribution"))).toEqual([]);
  });
});
