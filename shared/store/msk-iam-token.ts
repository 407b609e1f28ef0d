import { defaultProvider } from "@aws-sdk/credential-provider-node";
import type { AwsCredentialIdentityProvider } from "@smithy/types";
import { SignatureV4 } from "@smithy/signature-v4";
import { NodeSha256 } from "./node-sha256.ts";

/**
 * The OAUTHBEARER token MSK's IAM listener takes (what `aws-msk-iam-sasl-signer-js` makes): a
 * SigV4-presigned `kafka-cluster:Connect` URL for the cluster's region, base64url without padding.
 */

/** MSK accepts a token for at most 15 minutes. */
const TOKEN_TTL_SECONDS = 900;
const USER_AGENT = "ebb-msk-iam/1";

export async function mskIamToken(options: {
  readonly region: string;
  readonly credentials?: AwsCredentialIdentityProvider;
  readonly now?: Date;
}): Promise<string> {
  const signer = new SignatureV4({
    service: "kafka-cluster",
    region: options.region,
    credentials: options.credentials ?? defaultProvider(),
    sha256: NodeSha256 as never,
  });
  const hostname = `kafka.${options.region}.amazonaws.com`;
  const signed = await signer.presign(
    {
      method: "GET",
      protocol: "https:",
      hostname,
      path: "/",
      query: { Action: "kafka-cluster:Connect" },
      headers: { host: hostname },
    },
    { expiresIn: TOKEN_TTL_SECONDS, ...(options.now ? { signingDate: options.now } : {}) },
  );
  const url = new URL(`https://${hostname}/`);
  for (const [name, value] of Object.entries({ ...signed.query, "User-Agent": USER_AGENT }))
    url.searchParams.set(name, String(value));
  return Buffer.from(url.toString()).toString("base64url");
}
