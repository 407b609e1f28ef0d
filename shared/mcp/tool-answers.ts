import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { EbbApiError } from "../client/ebb-client.ts";

/**
 * What a tool answers: text a person (and the assistant relaying it) can read, and the API's own
 * answer as `structuredContent` for a client that wants the data. A refusal is a tool error carrying
 * the API's `error_code` and message, so the assistant can quote the way out Ebb gives.
 */

export function answer(text: string, data?: unknown): CallToolResult {
  return {
    content: [{ type: "text", text }],
    ...(data !== undefined ? { structuredContent: asObject(data) } : {}),
  };
}

export function refusal(errorCode: string, message: string): CallToolResult {
  return {
    isError: true,
    content: [{ type: "text", text: `${errorCode}: ${message}` }],
    structuredContent: { error_code: errorCode, message },
  };
}

/** Runs a tool's calls of the API; a refusal of the API becomes the tool's refusal, with its code. */
export async function refusingAsTheApi(run: () => Promise<CallToolResult>): Promise<CallToolResult> {
  try {
    return await run();
  } catch (error) {
    if (error instanceof EbbApiError) return refusal(error.errorCode, error.message);
    throw error;
  }
}

function asObject(data: unknown): Record<string, unknown> {
  return typeof data === "object" && data !== null && !Array.isArray(data)
    ? (data as Record<string, unknown>)
    : { result: data };
}
