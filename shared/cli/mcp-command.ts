import type { Command } from "commander";
import { topCommand } from "./command-catalogue.ts";
import { api } from "./pipeline-commands.ts";

/**
 * `ebb mcp`: an MCP server on standard input and output, over the API the other commands use
 * (`--endpoint`/`--token` or `EBB_ENDPOINT`/`EBB_TOKEN`; SigV4 without a token). An assistant's MCP
 * client starts it as a child process; it runs until the client closes the pipe.
 */
export function addMcpCommand(program: Command): void {
  topCommand(program, "mcp").action(async (_options: object, command: Command) => {
    const client = api(command);
    // Loaded here only: the SDK is for this command alone.
    const [{ StdioServerTransport }, { createEbbMcpServer }, { EBB_VERSION }] = await Promise.all([
      import("@modelcontextprotocol/sdk/server/stdio.js"),
      import("../mcp/ebb-mcp-server.ts"),
      import("../mcp/ebb-version.ts"),
    ]);
    const transport = new StdioServerTransport();
    const closed = new Promise<void>((resolve) => (transport.onclose = resolve));
    await createEbbMcpServer(client, EBB_VERSION).connect(transport);
    await closed;
  });
}
