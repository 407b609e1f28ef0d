import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { z } from "zod";

/**
 * "Investigate and rewind": the seed's recipe for an incident, as steps an assistant follows with
 * the tools — find the onset, pick the point before it, rehearse, get the person's yes, rewind,
 * replay, check.
 */
export function registerIncidentPrompt(server: McpServer): void {
  server.registerPrompt(
    "investigate_and_rewind",
    {
      title: "Investigate bad data and rewind",
      description: "Walks an incident from the symptom to a replayed, checked pipeline",
      argsSchema: {
        pipeline_id: z.string().describe("the pipeline that wrote the bad data"),
        incident: z.string().describe("what is wrong, in the person's words"),
        table: z.string().optional().describe("the table where it shows, if known"),
      },
    },
    ({ pipeline_id, incident, table }) => ({
      messages: [
        {
          role: "user",
          content: {
            type: "text",
            text: [
              `Pipeline ${pipeline_id} has bad data: ${incident}`,
              "",
              "Work through it with Ebb's tools, one step at a time, and tell me what you find at each:",
              `1. describe_pipeline to see its datasets and what reads what${table ? ` (the data shows in ${table})` : ""}.`,
              "2. Turn the symptom into a SQL predicate over the table's columns that matches the bad rows; check it with query_table.",
              "3. find_onset with that predicate: the first bad version, the last good commit, and the newest rewind point before the onset.",
              "4. plan_rewind to that point (or to the rewind_timestamp find_onset gave). Show me the plan: each table's version now and after, the rows taken back, the flows moved back, what cascades.",
              "5. Ask me to confirm. Only when I say yes, call rewind with the plan_id and confirm: true.",
              "6. If the cause is a bad deploy, remind me to deploy the fix before the replay.",
              "7. start_update to replay, then get_update with wait_seconds until it ends.",
              "8. query_table with the predicate again: it should match no rows. Tell me the outcome.",
            ].join("\n"),
          },
        },
      ],
    }),
  );
}
