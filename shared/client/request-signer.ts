import { defaultProvider } from "@aws-sdk/credential-provider-node";
import { NodeSha256 } from "../store/node-sha256.ts";
import type { RequestAuth } from "./request-auth.ts";
import { sigV4RequestAuth } from "./sigv4-auth.ts";

/**
 * How the CLI, the demo and the tests prove who they are: a bearer token (the local runtime, as the
 * Databricks CLI sends it) or SigV4 with the default AWS credential chain (API Gateway's IAM auth on AWS).
 */
export type { RequestAuth };

export function bearerAuth(token: string): RequestAuth {
  return { headers: async () => ({ authorization: `Bearer ${token}` }) };
}

export function sigV4Auth(region: string): RequestAuth {
  return sigV4RequestAuth({ region, credentials: defaultProvider(), sha256: NodeSha256 as never });
}
