import { EbbClient } from "../client/ebb-client.ts";
import { bearerAuth, sigV4Auth } from "../client/request-signer.ts";
import { UsageError } from "./usage-error.ts";

/**
 * Where the CLI's API commands send their requests: `--endpoint` / `--token`, else `EBB_ENDPOINT` /
 * `EBB_TOKEN` (what `npm start` prints). With a token the request carries `Authorization: Bearer`
 * (the local runtime); without one it is signed with SigV4 from the default AWS credential chain
 * (the deployed API's IAM auth), in `AWS_REGION` or the region in the API's host name.
 */
export interface ConnectionOptions {
  readonly endpoint?: string;
  readonly token?: string;
}

export function connect(options: ConnectionOptions, env: NodeJS.ProcessEnv = process.env): EbbClient {
  const endpoint = options.endpoint ?? env["EBB_ENDPOINT"];
  if (!endpoint) {
    throw new UsageError(
      "no API endpoint: pass --endpoint, or export EBB_ENDPOINT (npm start prints it; on AWS it is the stack's ApiUrl output)",
    );
  }
  if (!URL.canParse(endpoint) || !/^https?:$/.test(new URL(endpoint).protocol)) {
    throw new UsageError(
      `the API endpoint ${JSON.stringify(endpoint)} is not an http(s) URL: pass one such as http://127.0.0.1:8080 (npm start prints EBB_ENDPOINT)`,
    );
  }
  const token = options.token ?? env["EBB_TOKEN"];
  if (token) return new EbbClient({ endpoint, auth: bearerAuth(token) });
  const region = env["AWS_REGION"] ?? /\.execute-api\.([a-z0-9-]+)\.amazonaws\.com/.exec(endpoint)?.[1];
  if (!region)
    throw new UsageError("no token and no AWS region: pass --token, or export AWS_REGION for SigV4");
  return new EbbClient({ endpoint, auth: sigV4Auth(region) });
}
