import { SignatureV4 } from "@smithy/signature-v4";
import type { RequestAuth } from "./request-auth.ts";

/**
 * SigV4 for API Gateway's IAM auth (service `execute-api`), with nothing from Node, so the CLI and
 * the web UI sign the same way: each brings its credentials and its SHA-256 (node:crypto, WebCrypto).
 *
 * `signedAs` is the API's own URL when the request goes through a proxy: the web UI calls its own
 * origin, and CloudFront forwards `/api/*` to the API's stage without the viewer's Host, so the
 * signature must cover the API's host and the stage path API Gateway will see, not the URL fetched.
 */
type SignerInit = ConstructorParameters<typeof SignatureV4>[0];

export interface SigV4Options {
  readonly region: string;
  readonly credentials: SignerInit["credentials"];
  readonly sha256: SignerInit["sha256"];
  /** The API's URL (`https://<id>.execute-api.<region>.amazonaws.com/<stage>`); the request's own by default. */
  readonly signedAs?: URL;
}

export function sigV4RequestAuth(options: SigV4Options): RequestAuth {
  const signer = new SignatureV4({
    service: "execute-api",
    region: options.region,
    credentials: options.credentials,
    sha256: options.sha256,
  });
  const stagePath = options.signedAs?.pathname.replace(/\/+$/, "") ?? "";
  return {
    async headers({ method, url, body }) {
      const target = options.signedAs ?? url;
      const signed = await signer.sign({
        method,
        protocol: target.protocol,
        hostname: target.hostname,
        ...(target.port ? { port: Number(target.port) } : {}),
        path: stagePath + url.pathname,
        query: Object.fromEntries(url.searchParams),
        headers: { host: target.host, ...(body !== undefined ? { "content-type": "application/json" } : {}) },
        ...(body !== undefined ? { body } : {}),
      });
      return Object.fromEntries(Object.entries(signed.headers).filter(([name]) => name !== "host"));
    },
  };
}
