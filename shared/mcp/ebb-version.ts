import { createRequire } from "node:module";

/** Ebb's version, from its package.json: what the MCP server says it is. */
export const EBB_VERSION: string = (
  createRequire(import.meta.url)("../../package.json") as { version: string }
).version;
