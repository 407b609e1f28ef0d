import { mkdirSync, rmSync } from "node:fs";
import http from "node:http";
import { parseArgs } from "node:util";
import S3rver from "s3rver";
import { listInByteOrder } from "./byte-ordered-listing.ts";
import { LOOPBACK } from "./loopback-port.ts";
import { exitWhenParentGone } from "./parent-watchdog.ts";
import { s3Front } from "./s3-front.ts";

/**
 * The embedded S3 process: s3rver, listing in S3's order (byte-ordered-listing.ts), behind the S3
 * front (s3-front.ts) on a free loopback port.
 * `node --openssl-legacy-provider s3-server-main.ts --directory <dir> [--remove-on-exit]`; s3rver's
 * listing continuation tokens use DES, which OpenSSL 3 keeps in its legacy provider.
 * Prints `{"listening":<port>}` once it accepts requests; exits when its parent goes away, removing
 * the folder first with `--remove-on-exit` (the "in memory" mode), even if the parent was killed.
 */
const { values } = parseArgs({
  options: { directory: { type: "string" }, "remove-on-exit": { type: "boolean", default: false } },
});
const directory = values.directory;
if (!directory) {
  console.error("usage: s3-server-main.ts --directory <dir> [--remove-on-exit]");
  process.exit(2);
}
mkdirSync(directory, { recursive: true });

const s3rver = new S3rver({ directory, silent: true, vhostBuckets: false });
listInByteOrder(s3rver.store);
const server = http.createServer(s3Front(s3rver));
server.listen(0, LOOPBACK, () => {
  const address = server.address();
  if (address && typeof address !== "string") console.log(JSON.stringify({ listening: address.port }));
});

exitWhenParentGone(() => {
  server.closeAllConnections();
  server.close();
  if (values["remove-on-exit"]) rmSync(directory, { recursive: true, force: true });
});
