/**
 * The API could not be reached, or its connection ended before an answer: the runtime is not running
 * (or stopped mid-request), the endpoint is wrong, or the network is down. Not an API error (no
 * `error_code`): nothing answered. Says where the client tried and the way out, without a stack.
 */
export class EndpointUnreachableError extends Error {
  override readonly name = "EndpointUnreachableError";

  constructor(
    readonly endpoint: string,
    readonly method: string,
    cause: unknown,
  ) {
    super(messageOf(endpoint, method, cause), { cause });
  }
}

/** `fetch`'s low-level reason (`ECONNREFUSED`, `ENOTFOUND`, `UND_ERR_SOCKET`, …), if it gave one. */
function reasonOf(cause: unknown): string | undefined {
  const inner = (cause as { cause?: { code?: unknown } } | undefined)?.cause;
  return typeof inner?.code === "string" ? inner.code : undefined;
}

function messageOf(endpoint: string, method: string, cause: unknown): string {
  const reason = reasonOf(cause);
  const refused = reason === "ECONNREFUSED" || reason === "ENOTFOUND" || reason === "EAI_AGAIN";
  const what = refused
    ? `cannot reach Ebb at ${endpoint} (${reason})`
    : `the connection to Ebb at ${endpoint} ended without an answer${reason ? ` (${reason})` : ""}`;
  // A write whose connection dropped may have run: say how to find out rather than guess.
  const maybeRan =
    !refused && method !== "GET" && method !== "HEAD"
      ? "; the request may have run: look before sending it again (ebb pipelines get <id>)"
      : "";
  return `${what}: is the runtime running (npm start) and is EBB_ENDPOINT (or --endpoint) its address?${maybeRan}`;
}
