import type { CognitoSignInConfig } from "./app-config.ts";

/**
 * The URLs of Cognito's hosted sign-in and the PKCE values that go with them (RFC 7636): pure, so
 * they are tested outside a browser; cognito-sign-in.ts does the redirects and requests.
 */

/** Where Cognito sends the browser back: the app's root (the callback URL the stack registers). */
export function redirectUri(location: { readonly origin: string }): string {
  return `${location.origin}/`;
}

export function authorizeUrl(
  config: CognitoSignInConfig,
  redirect: string,
  state: string,
  challenge: string,
): string {
  const query = new URLSearchParams({
    response_type: "code",
    client_id: config.userPoolClientId,
    redirect_uri: redirect,
    scope: "openid email profile",
    state,
    code_challenge: challenge,
    code_challenge_method: "S256",
  });
  return `${config.domain}/oauth2/authorize?${query}`;
}

export function logoutUrl(config: CognitoSignInConfig, redirect: string): string {
  return `${config.domain}/logout?${new URLSearchParams({ client_id: config.userPoolClientId, logout_uri: redirect })}`;
}

/** A URL-safe random string of 43 characters (32 bytes): a PKCE verifier or a state. */
export function randomToken(): string {
  return base64Url(crypto.getRandomValues(new Uint8Array(32)));
}

/** RFC 7636's S256 challenge of `verifier`. */
export async function pkceChallenge(verifier: string): Promise<string> {
  return base64Url(new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(verifier))));
}

function base64Url(bytes: Uint8Array): string {
  let binary = "";
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary).replaceAll("+", "-").replaceAll("/", "_").replace(/=+$/, "");
}
