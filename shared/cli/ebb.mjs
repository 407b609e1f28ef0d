#!/usr/bin/env node
// The `ebb` command: runs the TypeScript CLI through tsx, so a clone needs no build step.
import { register } from "tsx/esm/api";

register();
const { runCli } = await import("./main.ts");
process.exitCode = await runCli(process.argv.slice(2));
