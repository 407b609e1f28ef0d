/**
 * How the app finds its API and signs in. On AWS the stack deploys `config.json` beside the app
 * (infra/aws/ebb-web-ui.ts): the API's URL and the Cognito sign-in. The local runtime serves one that
 * names its session sign-in (the token `npm start` prints; infra/local/api-server.ts); a missing file
 * means the same.
 */

export interface CognitoSignInConfig {
  readonly kind: "cognito";
  readonly region: string;
  /** The hosted sign-in's base URL, `https://<prefix>.auth.<region>.amazoncognito.com`. */
  readonly domain: string;
  readonly userPoolClientId: string;
  /** The identity pool's login key for the user pool, `cognito-idp.<region>.amazonaws.com/<pool id>`. */
  readonly userPoolProvider: string;
  readonly identityPoolId: string;
}

export type AppConfig =
  | { readonly signIn: { readonly kind: "session" } }
  | { readonly apiUrl: string; readonly signIn: CognitoSignInConfig };

const SESSION: AppConfig = { signIn: { kind: "session" } };

export async function loadAppConfig(): Promise<AppConfig> {
  const response = await fetch("/config.json");
  if (response.status === 404) return SESSION;
  if (!response.ok) throw new Error(`config.json: HTTP ${response.status}`);
  return parseAppConfig(await response.json());
}

/** The deployed config, checked field by field: a stack of another version fails here, by name. */
export function parseAppConfig(json: unknown): AppConfig {
  const object = (value: unknown, where: string): Record<string, unknown> => {
    if (typeof value !== "object" || value === null || Array.isArray(value))
      throw new Error(`config.json: ${where} must be an object`);
    return value as Record<string, unknown>;
  };
  const text = (from: Record<string, unknown>, key: string, where: string): string => {
    const value = from[key];
    if (typeof value !== "string" || value === "")
      throw new Error(`config.json: ${where}.${key} must be a string`);
    return value;
  };
  const root = object(json, "the file");
  const signIn = object(root["signIn"], "signIn");
  if (signIn["kind"] === "session") return SESSION;
  if (signIn["kind"] !== "cognito")
    throw new Error(`config.json: signIn.kind must be "session" or "cognito"`);
  return {
    apiUrl: text(root, "apiUrl", "config"),
    signIn: {
      kind: "cognito",
      region: text(signIn, "region", "signIn"),
      domain: text(signIn, "domain", "signIn").replace(/\/+$/, ""),
      userPoolClientId: text(signIn, "userPoolClientId", "signIn"),
      userPoolProvider: text(signIn, "userPoolProvider", "signIn"),
      identityPoolId: text(signIn, "identityPoolId", "signIn"),
    },
  };
}
