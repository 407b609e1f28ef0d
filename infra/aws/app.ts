import { buildStack } from "./synthesize.ts";

// The CDK app (`cdk.json` runs this file): writes the cloud assembly to cdk.out/, or where the cdk CLI says.
const { app, stack } = buildStack(process.env["CDK_OUTDIR"] ?? "cdk.out", { bundle: true });
const assembly = app.synth();
console.log(`synthesized ${stack.stackName} to ${assembly.directory}`);
