import { mkdirSync, rmSync } from "node:fs";
import http from "node:http";
import { parseArgs } from "node:util";
import S3rver from "s3rver";
import { DUMMY_ACCOUNT } from "s3rver/lib/models/account.js";
import { listInByteOrder } from "./byte-ordered-listing.ts";
import { LOOPBACK } from "./loopback-port.ts";
import { exitWhenParentGone } from "./parent-watchdog.ts";
import { s3Front } from "./s3-front.ts";
import { writeWithinDisk } from "./s3rver-disk-writes.ts";

/**
 * The embedded S3 process: s3rver, listing in S3's order (byte-ordered-listing.ts), behind the S3
 * front (s3-front.ts) on a free loopback port.
 * `node --openssl-legacy-provider s3-server-main.ts --directory <dir> [--remove-on-exit]`; s3rver's
 * listing continuation tokens use DES, which OpenSSL 3 keeps in its legacy provider.
 * The credentials come in `EBB_S3_ACCESS_KEY_ID` and `EBB_S3_SECRET_ACCESS_KEY` (the environment, which
 * other users cannot read, unlike the command line); `--port` pins the port (default: any free one).
 * Prints `{"listening":<port>}` once it accepts requests; exits when its parent goes away, removing
 * the folder first with `--remove-on-exit` (the "in memory" mode), even if the parent was killed.
 */
const { values } = parseArgs({
  options: {
    directory: { type: "string" },
    port: { type: "string", default: "0" },
    "remove-on-exit": { type: "boolean", default: false },
  },
});
const directory = values.directory;
const accessKeyId = process.env["EBB_S3_ACCESS_KEY_ID"];
const secretAccessKey = process.env["EBB_S3_SECRET_ACCESS_KEY"];
if (!directory || !accessKeyId || !secretAccessKey) {
  console.error(
    "usage: EBB_S3_ACCESS_KEY_ID=… EBB_S3_SECRET_ACCESS_KEY=… s3-server-main.ts --directory <dir> [--port <n>] [--remove-on-exit]",
  );
  process.exit(2);
}
mkdirSync(directory, { recursive: true });

const s3rver = new S3rver({ directory, silent: true, vhostBuckets: false });
listInByteOrder(s3rver.store);
writeWithinDisk(s3rver, directory);
// s3rver looks the key up (and checks no V4 signature); the front has verified it by then.
DUMMY_ACCOUNT.revokeAccessKey("S3RVER");
DUMMY_ACCOUNT.createKeyPair(accessKeyId, secretAccessKey);
const server = http.createServer(s3Front(s3rver, { accessKeyId, secretAccessKey }));
server.once("error", (error) => {
  console.error(`embedded S3 cannot listen on ${LOOPBACK}:${values.port}: ${error.message}`);
  process.exit(1);
});
server.listen(Number(values.port), LOOPBACK, () => {
  const address = server.address();
  if (address && typeof address !== "string") console.log(JSON.stringify({ listening: address.port }));
});

exitWhenParentGone(() => {
  server.closeAllConnections();
  server.close();
  if (values["remove-on-exit"]) rmSync(directory, { recursive: true, force: true });
});
