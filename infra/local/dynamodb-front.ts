import { randomBytes } from "node:crypto";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { LOOPBACK } from "./loopback-port.ts";
import { verifySigV4, type SigV4Credentials } from "./sigv4-verifier.ts";

/** The header DynamoDB Local's launcher (dynamodb/LoopbackDynamoDbLocal.java) requires on every request. */
export const FRONT_KEY_HEADER = "x-ebb-stand-in-key";
/** The environment variable that hands DynamoDB Local the front's key. */
export const FRONT_KEY_ENV = "EBB_DYNAMODB_FRONT_KEY";

export interface DynamoDbFront {
  readonly endpoint: string;
  close(): Promise<void>;
}

/** A fresh key for one DynamoDB Local process: only its front knows it. */
export function newFrontKey(): string {
  return randomBytes(32).toString("hex");
}

/**
 * DynamoDB Local answers any request, and loopback is reachable by every OS user of the machine. So
 * clients reach it through this front, as they reach S3 through s3-front.ts: a request must be signed
 * (Signature Version 4, service `dynamodb`) with the runtime's credentials, or it is refused as AWS
 * refuses it; a signed one is passed on with the key DynamoDB Local was started with, and DynamoDB
 * Local refuses everything without that key. Its answers come back unchanged.
 */
export async function serveDynamoDbFront(options: {
  /** DynamoDB Local's own endpoint, e.g. `http://127.0.0.1:41234`. */
  readonly target: string;
  readonly credentials: SigV4Credentials;
  readonly key: string;
  /** @default any free loopback port */
  readonly port?: number;
}): Promise<DynamoDbFront> {
  const target = new URL(options.target);
  const agent = new http.Agent({ keepAlive: true });
  const server = http.createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => {
      const body = Buffer.concat(chunks);
      const verdict = verifySigV4(
        { method: request.method ?? "POST", url: request.url ?? "/", headers: request.headers, body },
        options.credentials,
        "dynamodb",
      );
      if (!verdict.ok) return refuse(response, 400, DYNAMODB_CODE[verdict.code], verdict.message);
      const headers = { ...request.headers, [FRONT_KEY_HEADER]: options.key };
      const upstream = http.request(
        {
          host: target.hostname,
          port: target.port,
          method: request.method,
          path: request.url,
          headers,
          agent,
        },
        (answer) => {
          response.writeHead(answer.statusCode ?? 500, answer.headers);
          answer.pipe(response);
        },
      );
      upstream.on("error", (error) => {
        // DynamoDB Local is starting or gone: a 5xx the SDK retries, as it retries AWS's.
        if (response.headersSent) return response.destroy();
        refuse(response, 503, "ServiceUnavailable", `DynamoDB Local did not answer: ${error.message}`);
      });
      upstream.end(body);
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port ?? 0, LOOPBACK, resolve);
  });
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://${LOOPBACK}:${port}`,
    close: async () => {
      server.closeAllConnections();
      agent.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** DynamoDB's own names for the refusals (its JSON errors carry `__type`). */
const DYNAMODB_CODE = {
  MissingAuthenticationToken: "MissingAuthenticationTokenException",
  IncompleteSignature: "IncompleteSignatureException",
  InvalidAccessKeyId: "UnrecognizedClientException",
  SignatureDoesNotMatch: "InvalidSignatureException",
  RequestTimeTooSkewed: "InvalidSignatureException",
} as const;

function refuse(response: http.ServerResponse, status: number, code: string, message: string): void {
  response.writeHead(status, { "content-type": "application/x-amz-json-1.0" });
  response.end(JSON.stringify({ __type: `com.amazonaws.dynamodb.v20120810#${code}`, message }));
}
