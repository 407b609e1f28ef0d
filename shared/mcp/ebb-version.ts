import packageJson from "../../package.json" with { type: "json" };

/** Ebb's version, from its package.json: what the MCP server says it is. */
export const EBB_VERSION: string = packageJson.version;
