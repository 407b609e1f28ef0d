#!/usr/bin/env node
// The `ebb` command: runs the CLI built to JavaScript from the sources as they are now (built on
// `npm ci`, and again by the first command after a source changed), so it starts in a fraction of a
// second and never runs old code. Without esbuild (a production install) it runs the TypeScript
// through tsx, as slowly as before.
import { builtCli } from "./cli-build.mjs";

const built = await builtCli();
let runCli;
if (built) {
  process.setSourceMapsEnabled(true);
  ({ runCli } = await import(built));
} else {
  const { register } = await import("tsx/esm/api");
  register();
  ({ runCli } = await import("./main.ts"));
}
process.exitCode = await runCli(process.argv.slice(2));
