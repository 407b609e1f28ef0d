/**
 * When the client sends a request again. A request that may not have run is safe to resend; one that
 * may have run only if repeating it changes nothing:
 *
 * - Any method, answered 429: API Gateway throttled it before any handler ran.
 * - GET, also on a dropped connection (the socket reset or closed before an answer, which a local
 *   runtime busy in a long batch or a cold Lambda behind a load balancer can cause) and on 502, 503
 *   and 504 (the gateway's answers for a handler it could not reach or that did not answer in time).
 *
 * Everything else is answered as it came. Three retries, 250 ms doubling: about two seconds in all.
 */

export const RETRY_DELAYS_MS: readonly number[] = [250, 500, 1000];

const GATEWAY_UNAVAILABLE = new Set([502, 503, 504]);

export type Outcome = { readonly status: number } | { readonly dropped: unknown };

/** Whether `outcome` of a `method` request should be tried again. Pure. */
export function shouldRetry(method: string, outcome: Outcome): boolean {
  const idempotent = method === "GET" || method === "HEAD";
  if ("dropped" in outcome) return idempotent && isDroppedConnection(outcome.dropped);
  return outcome.status === 429 || (idempotent && GATEWAY_UNAVAILABLE.has(outcome.status));
}

/** `fetch`'s failure for a connection that ended without an answer (not a refused or bad URL). */
function isDroppedConnection(error: unknown): boolean {
  const cause = (error as { cause?: { code?: string } } | undefined)?.cause;
  return ["ECONNRESET", "EPIPE", "UND_ERR_SOCKET", "UND_ERR_CLOSED"].includes(cause?.code ?? "");
}

/** `send()` until it is answered as it should be, or the retries run out. */
export async function withRetries(
  method: string,
  send: () => Promise<Response>,
  sleep: (ms: number) => Promise<void> = (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
): Promise<Response> {
  for (let attempt = 0; ; attempt++) {
    const last = attempt === RETRY_DELAYS_MS.length;
    let response: Response;
    try {
      response = await send();
    } catch (error) {
      if (last || !shouldRetry(method, { dropped: error })) throw error;
      await sleep(RETRY_DELAYS_MS[attempt]!);
      continue;
    }
    if (last || !shouldRetry(method, { status: response.status })) return response;
    await response.body?.cancel();
    await sleep(RETRY_DELAYS_MS[attempt]!);
  }
}
