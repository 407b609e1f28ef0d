import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { EbbClient } from "../client/ebb-client.ts";
import { registerChangeTools } from "./change-tools.ts";
import { registerIncidentPrompt } from "./incident-prompt.ts";
import { registerPipelineResources } from "./pipeline-resources.ts";
import { registerReadTools } from "./read-tools.ts";
import { RewindPlans } from "./rewind-plans.ts";

/**
 * Ebb as an MCP server: any assistant that speaks the Model Context Protocol can find the onset of
 * bad data, plan a rewind, run it once the person confirms, and replay — each tool a thin call of
 * Ebb's API through `client`, so the API's checks and error codes apply unchanged. One server per
 * MCP session: its rewind plans are the session's own.
 */
export function createEbbMcpServer(client: EbbClient, version: string): McpServer {
  const server = new McpServer(
    { name: "ebb", title: "Ebb: rewind and replay for data pipelines", version },
    {
      instructions:
        "Ebb runs declarative data pipelines over Delta tables and can rewind them to a point before bad data arrived, then replay. To fix bad data: find_onset, plan_rewind, show the plan, get the person's confirmation, rewind, start_update, check. Never rewind, refresh, vacuum or delete without the person's explicit yes.",
    },
  );
  registerReadTools(server, client);
  registerChangeTools(server, client, new RewindPlans());
  registerPipelineResources(server, client);
  registerIncidentPrompt(server);
  return server;
}
