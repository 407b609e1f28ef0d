import { EbbApiError, EbbClient } from "../../../shared/client/ebb-client.ts";

/**
 * The UI's one way to the API: Ebb's typed client over this origin, authenticated by the session cookie
 * the browser sends by itself (HttpOnly: no script can read it) plus the header that proves the request
 * comes from this app, not from another site.
 */
export const ebb = new EbbClient({
  endpoint: window.location.origin,
  auth: { headers: async () => ({ "x-ebb-ui": "1" }) },
});

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
