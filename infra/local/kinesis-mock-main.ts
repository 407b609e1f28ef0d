import { createRequire } from "node:module";
import net from "node:net";
import path from "node:path";
import { LOOPBACK } from "./loopback-port.ts";
import { exitWhenParentGone } from "./parent-watchdog.ts";

/**
 * The Kinesis stand-in process: kinesis-mock (npm `kinesis-local`, the emulator LocalStack runs for
 * Kinesis), in this process, on loopback only. It binds 0.0.0.0 and takes its two ports (plain HTTP and
 * TLS) from the environment, so every listen here is redirected to 127.0.0.1 on a port the kernel
 * picks, and the plain port is reported as `{"listening":<port>}` once it accepts requests. The
 * persisted-data options stay off: the stream lives as long as the process. Exits when its parent goes
 * away.
 */

/** Placeholders the mock is given for its ports; the listen hook tells them apart by these. */
const PLAIN_PLACEHOLDER = 45_680;
const TLS_PLACEHOLDER = 45_670;

const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function (this: net.Server, ...args: unknown[]) {
  const [first] = args;
  const requested =
    typeof first === "object" && first !== null ? (first as net.ListenOptions).port : Number(first);
  const callback = args.find((arg) => typeof arg === "function") as (() => void) | undefined;
  if (requested === PLAIN_PLACEHOLDER) {
    this.once("listening", () => {
      const address = this.address();
      if (address && typeof address !== "string") console.log(JSON.stringify({ listening: address.port }));
    });
  }
  return listen.call(this, { port: 0, host: LOOPBACK }, callback);
} as typeof net.Server.prototype.listen;

const require = createRequire(import.meta.url);
const mock = require.resolve("kinesis-local/main.js");
Object.assign(process.env, {
  KINESIS_MOCK_PLAIN_PORT: String(PLAIN_PLACEHOLDER),
  KINESIS_MOCK_TLS_PORT: String(TLS_PLACEHOLDER),
  KINESIS_MOCK_CERT_PATH: path.join(path.dirname(mock), "server.json"),
  SHOULD_PERSIST_DATA: "false",
  LOAD_DATA_IF_EXISTS: "false",
  LOG_LEVEL: process.env["LOG_LEVEL"] ?? "WARN",
});
exitWhenParentGone(() => undefined);
require(mock);
