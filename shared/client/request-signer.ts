import { defaultProvider } from "@aws-sdk/credential-provider-node";
import { SignatureV4 } from "@smithy/signature-v4";
import { NodeSha256 } from "../store/node-sha256.ts";
import type { RequestAuth } from "./request-auth.ts";

/**
 * How the CLI, the demo and the tests prove who they are: a bearer token (the local runtime, as the
 * Databricks CLI sends it) or SigV4 with the default AWS credential chain (API Gateway's IAM auth on AWS).
 */
export type { RequestAuth };

export function bearerAuth(token: string): RequestAuth {
  return { headers: async () => ({ authorization: `Bearer ${token}` }) };
}

export function sigV4Auth(region: string): RequestAuth {
  const signer = new SignatureV4({
    service: "execute-api",
    region,
    credentials: defaultProvider(),
    sha256: NodeSha256 as never,
  });
  return {
    async headers({ method, url, body }) {
      const signed = await signer.sign({
        method,
        protocol: url.protocol,
        hostname: url.hostname,
        ...(url.port ? { port: Number(url.port) } : {}),
        path: url.pathname,
        query: Object.fromEntries(url.searchParams),
        headers: { host: url.host, ...(body !== undefined ? { "content-type": "application/json" } : {}) },
        ...(body !== undefined ? { body } : {}),
      });
      return Object.fromEntries(Object.entries(signed.headers).filter(([name]) => name !== "host"));
    },
  };
}
