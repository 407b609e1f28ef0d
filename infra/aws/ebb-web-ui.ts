import { Duration, RemovalPolicy } from "aws-cdk-lib";
import type * as apigw from "aws-cdk-lib/aws-apigateway";
import type * as acm from "aws-cdk-lib/aws-certificatemanager";
import * as cloudfront from "aws-cdk-lib/aws-cloudfront";
import * as origins from "aws-cdk-lib/aws-cloudfront-origins";
import * as s3 from "aws-cdk-lib/aws-s3";
import * as s3deploy from "aws-cdk-lib/aws-s3-deployment";
import { Construct } from "constructs";
import { EbbSignIn } from "./ebb-sign-in.ts";
import { ACCESS_LOG_PREFIXES } from "./storage-defaults.ts";

/** The web UI's own domain name, with its certificate. */
export interface EbbWebUiDomain {
  /** e.g. `ebb.example.com`; point it (a CNAME or alias record) at the distribution. */
  readonly domainName: string;
  /** A certificate for `domainName`, in us-east-1 (CloudFront reads certificates only there). */
  readonly certificate: acm.ICertificate;
}

export interface EbbWebUiProps {
  /** The built app (`ui/dist`, from `npm run build:ui`). */
  readonly assets: string;
  /** The IAM-authorized API: served under `/api/*` of the app's own origin, its URL in `config.json`. */
  readonly api: apigw.RestApi;
  /** The hosted sign-in's domain prefix (ebb-sign-in.ts). */
  readonly signInDomainPrefix?: string;
  /** Receives the assets bucket's and the distribution's access logs. */
  readonly accessLogs: s3.IBucket;
  /**
   * Serve the app under this domain, viewers held to TLS 1.2 or newer (TLSv1.2_2021).
   * @default the distribution's `*.cloudfront.net` domain, whose certificate is CloudFront's own and
   * whose security policy CloudFront fixes at TLSv1 (browsers negotiate TLS 1.2 or 1.3 with it all the same)
   */
  readonly domain?: EbbWebUiDomain;
}

/**
 * The web UI on AWS: its built files in a private bucket (no public access, TLS only), served by
 * CloudFront through origin access control; every path that is no file answers `index.html`, so the
 * app's own routes load on a reload. `/api/*` goes to the API on the same origin (no CORS), with the
 * viewer's headers but not its Host, so the SigV4 signature the app computes for the API's own host
 * holds; nothing of it is cached. `config.json` tells the app the API's URL and how to sign in
 * (ebb-sign-in.ts).
 */
export class EbbWebUi extends Construct {
  readonly bucket: s3.Bucket;
  readonly distribution: cloudfront.Distribution;
  readonly signIn: EbbSignIn;
  /** Where the app is served: its own domain if given, else the distribution's. */
  readonly url: string;

  constructor(scope: Construct, id: string, props: EbbWebUiProps) {
    super(scope, id);
    this.bucket = new s3.Bucket(this, "Assets", {
      blockPublicAccess: s3.BlockPublicAccess.BLOCK_ALL,
      encryption: s3.BucketEncryption.S3_MANAGED,
      enforceSSL: true,
      removalPolicy: RemovalPolicy.DESTROY,
      autoDeleteObjects: true,
      serverAccessLogsBucket: props.accessLogs,
      serverAccessLogsPrefix: ACCESS_LOG_PREFIXES.webUiAssets,
    });
    const headers = new cloudfront.ResponseHeadersPolicy(this, "Headers", {
      securityHeadersBehavior: {
        contentSecurityPolicy: {
          // The API's host is a deploy-time token: allow API Gateway's domain.
          contentSecurityPolicy:
            "default-src 'self'; connect-src 'self' https://*.amazoncognito.com https://cognito-identity.*.amazonaws.com; style-src 'self' 'unsafe-inline'; img-src 'self' data:; frame-ancestors 'none'",
          override: true,
        },
        contentTypeOptions: { override: true },
        frameOptions: { frameOption: cloudfront.HeadersFrameOption.DENY, override: true },
        referrerPolicy: { referrerPolicy: cloudfront.HeadersReferrerPolicy.NO_REFERRER, override: true },
        strictTransportSecurity: {
          accessControlMaxAge: Duration.days(365),
          includeSubdomains: true,
          override: true,
        },
      },
    });
    this.distribution = new cloudfront.Distribution(this, "Distribution", {
      comment: "Ebb web UI",
      ...(props.domain
        ? {
            domainNames: [props.domain.domainName],
            certificate: props.domain.certificate,
            minimumProtocolVersion: cloudfront.SecurityPolicyProtocol.TLS_V1_2_2021,
          }
        : {}),
      enableLogging: true,
      logBucket: props.accessLogs,
      logFilePrefix: ACCESS_LOG_PREFIXES.webUiDistribution,
      defaultRootObject: "index.html",
      defaultBehavior: {
        origin: origins.S3BucketOrigin.withOriginAccessControl(this.bucket),
        viewerProtocolPolicy: cloudfront.ViewerProtocolPolicy.REDIRECT_TO_HTTPS,
        responseHeadersPolicy: headers,
      },
      additionalBehaviors: {
        "/api/*": {
          origin: new origins.RestApiOrigin(props.api),
          viewerProtocolPolicy: cloudfront.ViewerProtocolPolicy.HTTPS_ONLY,
          allowedMethods: cloudfront.AllowedMethods.ALLOW_ALL,
          cachePolicy: cloudfront.CachePolicy.CACHING_DISABLED,
          originRequestPolicy: cloudfront.OriginRequestPolicy.ALL_VIEWER_EXCEPT_HOST_HEADER,
        },
      },
      // Without ListBucket a missing key answers 403: both mean "an app route", answered by the app.
      errorResponses: [403, 404].map((httpStatus) => ({
        httpStatus,
        responseHttpStatus: 200,
        responsePagePath: "/index.html",
        ttl: Duration.seconds(0),
      })),
    });
    this.url = `https://${props.domain?.domainName ?? this.distribution.distributionDomainName}`;
    this.signIn = new EbbSignIn(this, "SignIn", {
      appUrl: this.url,
      api: props.api,
      ...(props.signInDomainPrefix !== undefined ? { domainPrefix: props.signInDomainPrefix } : {}),
    });
    new s3deploy.BucketDeployment(this, "Deploy", {
      destinationBucket: this.bucket,
      sources: [
        s3deploy.Source.asset(props.assets),
        s3deploy.Source.jsonData("config.json", { apiUrl: props.api.url, signIn: this.signIn.appConfig() }),
      ],
      distribution: this.distribution,
      distributionPaths: ["/index.html", "/config.json"],
    });
  }
}
