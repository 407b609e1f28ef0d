import { fileURLToPath } from "node:url";
import { LOOPBACK } from "./loopback-port.ts";
import type { SigV4Credentials } from "./sigv4-verifier.ts";
import { nodeScript, spawnStandIn, type RunningStandIn } from "./stand-in-process.ts";

/** How long the S3 process may take to listen (it needs ~0.5 s; far longer under load). */
const READY_TIMEOUT_MS = 60_000;

export interface S3ServerOptions {
  /** Folder holding the buckets. */
  readonly directory: string;
  /** Remove the folder when the server exits (also when this process dies). @default false */
  readonly removeOnExit?: boolean;
  /** The only key pair it accepts; every request must be signed with it. */
  readonly credentials: SigV4Credentials;
  /** @default any free loopback port */
  readonly port?: number;
}

/** Starts the embedded S3 (s3-server-main.ts) as a child process and waits until it listens. */
export async function startS3Server(options: S3ServerOptions): Promise<RunningStandIn> {
  const script = fileURLToPath(new URL("./s3-server-main.ts", import.meta.url));
  const args = [
    "--directory",
    options.directory,
    ...(options.port !== undefined ? ["--port", String(options.port)] : []),
    ...(options.removeOnExit ? ["--remove-on-exit"] : []),
  ];
  const server = spawnStandIn("embedded S3", ...nodeScript(script, args, ["--openssl-legacy-provider"]), {
    EBB_S3_ACCESS_KEY_ID: options.credentials.accessKeyId,
    EBB_S3_SECRET_ACCESS_KEY: options.credentials.secretAccessKey,
  });
  try {
    const [, port] = await server.waitForLine(/^\{"listening":(\d+)\}$/, READY_TIMEOUT_MS);
    return {
      endpoint: `http://${LOOPBACK}:${port}`,
      pids: server.pids,
      crashed: server.crashed,
      stop: () => server.stop(),
    };
  } catch (error) {
    await server.stop();
    throw error;
  }
}
