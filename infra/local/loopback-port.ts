import net from "node:net";

/** The loopback address every stand-in listens on (DynamoDB Local cannot be told to; see dynamodb-local.ts). */
export const LOOPBACK = "127.0.0.1";

/**
 * A TCP port free on loopback right now, for a process that cannot listen on port 0 and report back
 * (DynamoDB Local). Another process may take it before ours binds, so callers retry on a bind failure.
 */
export async function freeLoopbackPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, LOOPBACK, resolve);
  });
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  if (address === null || typeof address === "string") throw new Error("loopback listen returned no port");
  return address.port;
}
