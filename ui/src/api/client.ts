import { EbbApiError, EbbClient } from "../../../shared/client/ebb-client.ts";
import type { RequestAuth } from "../../../shared/client/request-auth.ts";
import { sigV4RequestAuth } from "../../../shared/client/sigv4-auth.ts";
import type { CognitoSignInConfig } from "./app-config.ts";
import type { CognitoSession } from "./cognito-sign-in.ts";
import { WebCryptoSha256 } from "./web-crypto-sha256.ts";

/**
 * The UI's one way to the API: Ebb's typed client over this origin. On the local runtime it is
 * authenticated by the session cookie the browser sends by itself (HttpOnly: no script can read it)
 * plus the header that proves the request comes from this app, not from another site. On AWS,
 * CloudFront forwards `/api/*` to API Gateway, and each request is signed with the signed-in user's
 * IAM credentials (`signRequestsAs`).
 */
const SESSION_AUTH: RequestAuth = { headers: async () => ({ "x-ebb-ui": "1" }) };
let auth = SESSION_AUTH;

export const ebb = new EbbClient({
  endpoint: window.location.origin,
  auth: { headers: (request) => auth.headers(request) },
});

/** From here on, requests are signed for `apiUrl` with the session's credentials; none: back to the cookie. */
export function signRequestsAs(
  signed: { apiUrl: string; signIn: CognitoSignInConfig; session: CognitoSession } | undefined,
): void {
  auth = signed
    ? sigV4RequestAuth({
        region: signed.signIn.region,
        credentials: () => signed.session.credentials(),
        sha256: WebCryptoSha256 as never,
        signedAs: new URL(signed.apiUrl),
      })
    : SESSION_AUTH;
}

export { EbbApiError };

export function isUnauthenticated(error: unknown): boolean {
  return error instanceof EbbApiError && error.status === 401;
}

/** Trades the token for a session cookie; the token is not kept. */
export async function signIn(token: string): Promise<void> {
  const response = await fetch("/auth/session", {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ token }),
  });
  if (!response.ok) {
    const body = (await response.json().catch(() => ({}))) as { message?: string };
    throw new Error(body.message ?? `sign-in failed (HTTP ${response.status})`);
  }
}

export async function signOut(): Promise<void> {
  await fetch("/auth/session", { method: "DELETE" });
}

/** A message for a failed call: the API's error code and text. */
export function errorText(error: unknown): string {
  if (error instanceof EbbApiError) return `${error.errorCode}: ${error.message}`;
  return error instanceof Error ? error.message : String(error);
}
