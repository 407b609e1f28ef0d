import { mkdtempSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { App, Aspects, Stack } from "aws-cdk-lib";
import { Annotations, Match } from "aws-cdk-lib/assertions";
import * as acm from "aws-cdk-lib/aws-certificatemanager";
import { AwsSolutionsChecks } from "cdk-nag";
import { describe, expect, it } from "vitest";
import { Ebb, type EbbProps } from "../../../infra/aws/ebb.ts";
import { buildStack } from "../../../infra/aws/synthesize.ts";

// cdk-nag's AwsSolutions pack over the stack as deployed (web UI included): every finding is either
// fixed in the constructs or suppressed with its reason (infra/aws/nag-suppressions.ts).
const assets = mkdtempSync(path.join(os.tmpdir(), "ebb-nag-"));
writeFileSync(path.join(assets, "index.html"), "<!doctype html><title>Ebb</title>");

/** The pack's unsuppressed errors and warnings, as `path: finding`. */
function findings(app: App, stack: Stack): string[] {
  Aspects.of(app).add(new AwsSolutionsChecks());
  const annotations = Annotations.fromStack(stack);
  const pack = Match.stringLikeRegexp("AwsSolutions-.*");
  return [...annotations.findError("*", pack), ...annotations.findWarning("*", pack)].map(
    (message) => `${message.id}: ${String(message.entry.data).split("\n")[0]}`,
  );
}

describe("cdk-nag AwsSolutions", () => {
  it("finds nothing unsuppressed in the Ebb stack with its web UI", () => {
    const { app, stack } = buildStack(undefined, { webUiAssets: assets });
    expect(findings(app, stack)).toEqual([]);
  });

  it("finds nothing unsuppressed in the construct with its own web UI domain and no reservation", () => {
    const app = new App({ context: { "aws:cdk:bundling-stacks": [] } });
    const stack = new Stack(app, "OwnDomain");
    const props: EbbProps = {
      webUiAssets: assets,
      webUiDomain: {
        domainName: "ebb.example.com",
        certificate: acm.Certificate.fromCertificateArn(
          stack,
          "Certificate",
          "arn:aws:acm:us-east-1:123456789012:certificate/00000000-0000-0000-0000-000000000000",
        ),
      },
    };
    new Ebb(stack, "Ebb", props);
    expect(findings(app, stack)).toEqual([]);
  });
});
