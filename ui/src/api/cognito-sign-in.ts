import type { CognitoSignInConfig } from "./app-config.ts";
import { authorizeUrl, pkceChallenge, randomToken, redirectUri } from "./hosted-sign-in.ts";

/**
 * Signing in on AWS: Cognito's hosted sign-in with the authorization code grant and PKCE (a public
 * client: no secret in the app), then the identity pool trades the ID token for short-lived IAM
 * credentials, with which the app signs its API calls (API Gateway's IAM auth, sigv4-auth.ts).
 *
 * Tokens and credentials live in this module's memory only: nothing a script on another page, or a
 * server log, could read. A reload signs in again through the hosted page, whose own session makes
 * that a redirect and back. Only the PKCE verifier and the state survive the redirect, in
 * sessionStorage, and are deleted when the code comes back.
 */

export interface AwsCredentials {
  readonly accessKeyId: string;
  readonly secretAccessKey: string;
  readonly sessionToken: string;
  readonly expiration: Date;
}

const PENDING_KEY = "ebb.signIn.pending";
/** Credentials are renewed when they have less than this left, so no request is signed with stale ones. */
const RENEW_BEFORE_MS = 5 * 60_000;

/** Sends the browser to the hosted sign-in. */
export async function beginSignIn(config: CognitoSignInConfig): Promise<void> {
  const verifier = randomToken();
  const state = randomToken();
  sessionStorage.setItem(PENDING_KEY, JSON.stringify({ verifier, state }));
  window.location.assign(
    authorizeUrl(config, redirectUri(window.location), state, await pkceChallenge(verifier)),
  );
}

let completing: Promise<CognitoSession | undefined> | undefined;

/**
 * The code the hosted sign-in sent back in the URL, traded for a session; undefined when the URL
 * holds none. The code and state leave the address bar at once; a code is traded once per page load.
 */
export function completeSignIn(config: CognitoSignInConfig): Promise<CognitoSession | undefined> {
  completing ??= tradeCode(config);
  return completing;
}

async function tradeCode(config: CognitoSignInConfig): Promise<CognitoSession | undefined> {
  const params = new URLSearchParams(window.location.search);
  const code = params.get("code");
  const error = params.get("error_description") ?? params.get("error");
  if (code === null && error === null) return undefined;
  window.history.replaceState(null, "", window.location.pathname);
  const pending = sessionStorage.getItem(PENDING_KEY);
  sessionStorage.removeItem(PENDING_KEY);
  if (error !== null) throw new Error(`sign-in failed: ${error}`);
  const { verifier, state } = (pending ? JSON.parse(pending) : {}) as { verifier?: string; state?: string };
  if (!verifier || state !== params.get("state"))
    throw new Error("sign-in failed: the answer does not match a sign-in this tab started; sign in again");
  const tokens = await tokenRequest(config, {
    grant_type: "authorization_code",
    code: code!,
    redirect_uri: redirectUri(window.location),
    code_verifier: verifier,
  });
  if (!tokens.refresh_token) throw new Error("sign-in failed: Cognito returned no refresh token");
  return new CognitoSession(config, tokens.id_token, tokens.refresh_token);
}

/** A signed-in user: IAM credentials from the identity pool, renewed before they expire. */
export class CognitoSession {
  #idToken: string;
  #credentials: AwsCredentials | undefined;
  #renewing: Promise<AwsCredentials> | undefined;

  constructor(
    private readonly config: CognitoSignInConfig,
    idToken: string,
    private readonly refreshToken: string,
  ) {
    this.#idToken = idToken;
  }

  /** The user's e-mail (or name) from the ID token, to show who is signed in. */
  get user(): string {
    const claims = JSON.parse(
      atob(this.#idToken.split(".")[1]!.replaceAll("-", "+").replaceAll("_", "/")),
    ) as {
      email?: string;
      "cognito:username"?: string;
    };
    return claims.email ?? claims["cognito:username"] ?? "signed in";
  }

  async credentials(): Promise<AwsCredentials> {
    const held = this.#credentials;
    if (held && held.expiration.getTime() - Date.now() > RENEW_BEFORE_MS) return held;
    this.#renewing ??= this.#renew().finally(() => (this.#renewing = undefined));
    return this.#renewing;
  }

  async #renew(): Promise<AwsCredentials> {
    if (this.#credentials) {
      // Not the first credentials: the ID token (1 hour) may have expired too.
      const tokens = await tokenRequest(this.config, {
        grant_type: "refresh_token",
        refresh_token: this.refreshToken,
      });
      this.#idToken = tokens.id_token;
    }
    const logins = { [this.config.userPoolProvider]: this.#idToken };
    const { IdentityId } = (await identityRequest(this.config, "GetId", {
      IdentityPoolId: this.config.identityPoolId,
      Logins: logins,
    })) as { IdentityId: string };
    const { Credentials } = (await identityRequest(this.config, "GetCredentialsForIdentity", {
      IdentityId,
      Logins: logins,
    })) as {
      Credentials: { AccessKeyId: string; SecretKey: string; SessionToken: string; Expiration: number };
    };
    this.#credentials = {
      accessKeyId: Credentials.AccessKeyId,
      secretAccessKey: Credentials.SecretKey,
      sessionToken: Credentials.SessionToken,
      expiration: new Date(Credentials.Expiration * 1000),
    };
    return this.#credentials;
  }
}

async function tokenRequest(
  config: CognitoSignInConfig,
  form: Record<string, string>,
): Promise<{ id_token: string; refresh_token?: string }> {
  const response = await fetch(`${config.domain}/oauth2/token`, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({ client_id: config.userPoolClientId, ...form }),
  });
  const body = (await response.json().catch(() => ({}))) as { id_token?: string; error?: string };
  if (!response.ok || !body.id_token)
    throw new Error(
      `sign-in failed: Cognito answered ${body.error ?? `HTTP ${response.status}`}; sign in again`,
    );
  return body as { id_token: string; refresh_token?: string };
}

/** A call of Cognito's identity service (its JSON protocol: what the AWS SDK would send). */
async function identityRequest(config: CognitoSignInConfig, action: string, body: unknown): Promise<unknown> {
  const response = await fetch(`https://cognito-identity.${config.region}.amazonaws.com/`, {
    method: "POST",
    headers: {
      "content-type": "application/x-amz-json-1.1",
      "x-amz-target": `AWSCognitoIdentityService.${action}`,
    },
    body: JSON.stringify(body),
  });
  const answer = (await response.json().catch(() => ({}))) as { message?: string; __type?: string };
  if (!response.ok)
    throw new Error(
      `sign-in failed: the identity pool refused ${action} (${answer.__type ?? response.status}: ${answer.message ?? ""})`,
    );
  return answer;
}
