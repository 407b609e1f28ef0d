import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { buildStack } from "./synthesize.ts";

// The CDK app (`cdk.json` runs this file): writes the cloud assembly to cdk.out/, or where the cdk CLI
// says, with the web UI that `npm run synth` builds first into ui/dist.
const webUiAssets = fileURLToPath(new URL("../../ui/dist", import.meta.url));
if (!existsSync(`${webUiAssets}/index.html`)) {
  throw new Error(
    `the web UI is not built (${webUiAssets}): run npm run build:ui first (npm run synth does)`,
  );
}
const { app, stack } = buildStack(process.env["CDK_OUTDIR"] ?? "cdk.out", { bundle: true, webUiAssets });
const assembly = app.synth();
console.log(`synthesized ${stack.stackName} to ${assembly.directory}`);
