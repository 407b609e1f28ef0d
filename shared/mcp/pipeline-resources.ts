import { ResourceTemplate, type McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { EbbClient } from "../client/ebb-client.ts";
import { describePipeline } from "./read-tools.ts";

/**
 * Each pipeline's definition (its settings and datasets, as the API holds them) and its dataflow
 * graph, as resources an assistant can attach to a conversation.
 */
export function registerPipelineResources(server: McpServer, client: EbbClient): void {
  const listed = (suffix: string) => async () => {
    const { statuses = [] } = await client.request<{ statuses?: { pipeline_id: string; name: string }[] }>(
      "GET",
      "/api/2.0/pipelines",
      { query: { max_results: 100 } },
    );
    return {
      resources: statuses.map((p) => ({
        uri: `ebb://pipelines/${p.pipeline_id}/${suffix}`,
        name: `${p.name} ${suffix}`,
      })),
    };
  };

  server.registerResource(
    "pipeline-definition",
    new ResourceTemplate("ebb://pipelines/{pipeline_id}/definition", { list: listed("definition") }),
    {
      title: "Pipeline definition",
      description: "A pipeline's settings and datasets (its spec), as JSON",
      mimeType: "application/json",
    },
    async (uri, { pipeline_id }) => {
      const pipeline = await client.getPipeline(String(pipeline_id));
      return {
        contents: [
          { uri: uri.href, mimeType: "application/json", text: JSON.stringify(pipeline["spec"], null, 2) },
        ],
      };
    },
  );

  server.registerResource(
    "pipeline-graph",
    new ResourceTemplate("ebb://pipelines/{pipeline_id}/graph", { list: listed("graph") }),
    {
      title: "Pipeline graph",
      description: "A pipeline's datasets, what each reads, its flows and its table's version",
      mimeType: "text/markdown",
    },
    async (uri, { pipeline_id }) => {
      const id = String(pipeline_id);
      const [pipeline, datasets] = await Promise.all([client.getPipeline(id), client.datasets(id)]);
      return {
        contents: [{ uri: uri.href, mimeType: "text/markdown", text: describePipeline(pipeline, datasets) }],
      };
    },
  );
}
