import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { sigV4RequestAuth } from "../../../shared/client/sigv4-auth.ts";
import { NodeSha256 } from "../../../shared/store/node-sha256.ts";
import { parseAppConfig, type CognitoSignInConfig } from "../../../ui/src/api/app-config.ts";
import { authorizeUrl, logoutUrl, pkceChallenge, randomToken } from "../../../ui/src/api/hosted-sign-in.ts";
import { WebCryptoSha256 } from "../../../ui/src/api/web-crypto-sha256.ts";

/**
 * The web UI's sign-in on AWS, in the parts that run without AWS: the app's SigV4 (WebCrypto, signing
 * for the API's host and stage while it calls its own origin, which CloudFront forwards) signs
 * exactly as the CLI's Node signer does for a direct call; PKCE as RFC 7636 defines it; the hosted
 * sign-in URLs; the deployed config.json read field by field.
 */

const credentials = async () => ({
  accessKeyId: "AKIDEXAMPLE",
  secretAccessKey: "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY",
  sessionToken: "session-token",
});
const API = "https://abc123.execute-api.eu-west-1.amazonaws.com/ebb/";
const APP = "https://d111111abcdef8.cloudfront.net";

const signIn: CognitoSignInConfig = {
  kind: "cognito",
  region: "eu-west-1",
  domain: "https://ebb-123.auth.eu-west-1.amazoncognito.com",
  userPoolClientId: "client-1",
  userPoolProvider: "cognito-idp.eu-west-1.amazonaws.com/eu-west-1_Pool",
  identityPoolId: "eu-west-1:0000-1111",
};

describe("the web UI's AWS sign-in", () => {
  beforeEach(() => {
    vi.useFakeTimers();
    vi.setSystemTime(new Date("2026-12-02T10:00:00Z"));
  });
  afterEach(() => vi.useRealTimers());

  it("hashes and HMACs as node:crypto does", async () => {
    for (const secret of [undefined, "key", new Uint8Array([1, 2, 3])]) {
      const web = new WebCryptoSha256(secret);
      const node = new NodeSha256(secret);
      for (const chunk of ["abc", new Uint8Array([0, 255, 7]), ""]) {
        web.update(chunk);
        node.update(chunk);
      }
      expect(Buffer.from(await web.digest()).toString("hex")).toBe(
        Buffer.from(await node.digest()).toString("hex"),
      );
    }
  });

  it("signs a call through CloudFront exactly as a direct call to the API's stage", async () => {
    const body = JSON.stringify({ full_refresh: true });
    const viaApp = await sigV4RequestAuth({
      region: "eu-west-1",
      credentials,
      sha256: WebCryptoSha256 as never,
      signedAs: new URL(API),
    }).headers({ method: "POST", url: new URL(`${APP}/api/2.0/pipelines/p1/updates?x=1`), body });
    const direct = await sigV4RequestAuth({
      region: "eu-west-1",
      credentials,
      sha256: NodeSha256 as never,
    }).headers({
      method: "POST",
      url: new URL(`${API}api/2.0/pipelines/p1/updates?x=1`),
      body,
    });
    expect(viaApp).toEqual(direct);
    expect(viaApp["authorization"]).toMatch(
      /^AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE\/20261202\/eu-west-1\/execute-api\/aws4_request, SignedHeaders=content-type;host;x-amz-content-sha256;x-amz-date;x-amz-security-token, Signature=[0-9a-f]{64}$/,
    );
    expect(viaApp["x-amz-security-token"]).toBe("session-token");
    // A different stage path is a different signature: the stage is part of what API Gateway checks.
    const otherStage = await sigV4RequestAuth({
      region: "eu-west-1",
      credentials,
      sha256: WebCryptoSha256 as never,
      signedAs: new URL(API.replace("/ebb/", "/prod/")),
    }).headers({ method: "POST", url: new URL(`${APP}/api/2.0/pipelines/p1/updates?x=1`), body });
    expect(otherStage["authorization"]).not.toBe(viaApp["authorization"]);
  });

  it("derives the PKCE challenge as RFC 7636 appendix B, from fresh random verifiers", async () => {
    expect(await pkceChallenge("dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk")).toBe(
      "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM",
    );
    const verifier = randomToken();
    expect(verifier).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(randomToken()).not.toBe(verifier);
  });

  it("sends the browser to the hosted sign-in with the code grant and S256, and back to the app", () => {
    const url = new URL(authorizeUrl(signIn, `${APP}/`, "state-1", "challenge-1"));
    expect(url.origin + url.pathname).toBe(`${signIn.domain}/oauth2/authorize`);
    expect(Object.fromEntries(url.searchParams)).toEqual({
      response_type: "code",
      client_id: "client-1",
      redirect_uri: `${APP}/`,
      scope: "openid email profile",
      state: "state-1",
      code_challenge: "challenge-1",
      code_challenge_method: "S256",
    });
    expect(logoutUrl(signIn, `${APP}/`)).toBe(
      `${signIn.domain}/logout?client_id=client-1&logout_uri=${encodeURIComponent(`${APP}/`)}`,
    );
  });

  it("reads the deployed config.json field by field, naming what is wrong", () => {
    expect(parseAppConfig({ apiUrl: API, signIn: { ...signIn, domain: `${signIn.domain}/` } })).toEqual({
      apiUrl: API,
      signIn,
    });
    expect(parseAppConfig({ signIn: { kind: "session" } })).toEqual({ signIn: { kind: "session" } });
    expect(() => parseAppConfig({ apiUrl: API, signIn: { ...signIn, identityPoolId: 7 } })).toThrow(
      "config.json: signIn.identityPoolId must be a string",
    );
    expect(() => parseAppConfig({ apiUrl: API })).toThrow("config.json: signIn must be an object");
    expect(() => parseAppConfig({ signIn: { kind: "oidc" } })).toThrow(
      'signIn.kind must be "session" or "cognito"',
    );
  });
});
