#!/usr/bin/env node
// The `ebb` command: runs the CLI built to JavaScript from the sources as they are now (built on
// `npm ci`, and again by the first command after a source changed), so it starts in a fraction of a
// second and never runs old code. Without esbuild (a production install) it runs the TypeScript
// through tsx, as slowly as before. Installed from the package (no sources beside it), it runs the
// CLI the package was built with (dist/, `npm run build`).
import { existsSync } from "node:fs";
import { builtCli } from "./cli-build.mjs";

const fromSources = existsSync(new URL("./main.ts", import.meta.url));
const built = fromSources ? await builtCli() : new URL("../../dist/shared/cli/main.js", import.meta.url).href;
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
