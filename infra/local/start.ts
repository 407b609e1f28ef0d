import { existsSync } from "node:fs";
import { mkdir, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { controlPlane } from "../../functions/runtime/control-plane-from-env.ts";
import { releaseStaleUpdates } from "../../shared/control/updates/stale-update.ts";
import { removeLeftoverScratchFolders } from "../../shared/duck/scratch-folder.ts";
import { interruptAllSandboxes } from "../../shared/engine/sandbox.ts";
import { keepApiToken, shellQuote, type ApiToken } from "./api-token.ts";
import { loadSynthesizedEbb } from "./ebb-synthesis-cache.ts";
import { DEFAULT_DATA_DIR, type EmbeddedAws } from "./embedded-aws.ts";
import { startEmbeddedEbb } from "./embedded-ebb.ts";
import { startKinesisMock } from "./kinesis-mock.ts";
import { startLocalControlPlane, type LocalControlPlane } from "./local-control-plane.ts";
import { localLogFile } from "./local-log.ts";
import { createOwnerOnly, restrictToOwner } from "./owner-only.ts";
import { SECRET_ACCESS_KEY_FILE, writeStandInCredentials } from "./stand-in-credentials.ts";
import type { StorageNames } from "./provision-ebb.ts";
import type { RunningStandIn } from "./stand-in-process.ts";

/**
 * `npm start [-- --data-dir <folder> | --data-dir memory] [--port <n>] [--s3-port <n>]
 * [--dynamodb-port <n>] [--allow-local-path <folder>]… [--kinesis] [--verbose] [--webhook <url>]`: the whole of Ebb on this machine — the embedded AWS stand-ins with Ebb's storage provisioned from the synthesized stack, and
 * the control plane (API on 127.0.0.1 behind a bearer token, the state machine, the schedule) — until
 * Ctrl-C. Every listener is on 127.0.0.1. The API's port comes from `--port`, else `EBB_PORT`, else any
 * free one; `--s3-port` / `EBB_S3_PORT` and `--dynamodb-port` / `EBB_DYNAMODB_PORT` pin the stand-ins
 * the same way, so pasted exports survive a restart. The token and the stand-ins' secret key are kept
 * in the data folder (0600, never printed) so they survive restarts. Sources may read local folders
 * only under `<data>/landing` (made on start) and each `--allow-local-path`. The web UI (`ui/dist`, built by
 * `npm run build:ui` before this starts) is served at `/`; its sign-in link, which carries the token
 * in its fragment, is written next to the token rather than printed. With `--kinesis` the Kinesis
 * stand-in runs too (streams in its memory), and `kinesis` sources without an `endpoint` read it.
 * The functions' JSON log (a line per request and per task) goes to `<data>/logs/ebb.log` (beside
 * the token in memory), and with `--verbose` to the console as well. With `--webhook <url>` (or
 * `EBB_EVENTS_WEBHOOK`) each lifecycle event is POSTed there as JSON (docs/events.md).
 */
const UI_ASSETS = fileURLToPath(new URL("../../ui/dist", import.meta.url));
const { values } = parseArgs({
  options: {
    "data-dir": { type: "string", default: DEFAULT_DATA_DIR },
    port: { type: "string", default: process.env["EBB_PORT"] },
    "s3-port": { type: "string", default: process.env["EBB_S3_PORT"] },
    "dynamodb-port": { type: "string", default: process.env["EBB_DYNAMODB_PORT"] },
    "allow-local-path": { type: "string", multiple: true, default: [] },
    kinesis: { type: "boolean", default: false },
    verbose: { type: "boolean", default: false },
    webhook: { type: "string", default: process.env["EBB_EVENTS_WEBHOOK"] },
  },
});
const webhook = values.webhook === "" ? undefined : values.webhook;
if (webhook !== undefined && !/^https?:$/.test(URL.canParse(webhook) ? new URL(webhook).protocol : "")) {
  console.error(
    `--webhook (or EBB_EVENTS_WEBHOOK) ${JSON.stringify(webhook)} must be an http:// or https:// URL`,
  );
  process.exit(2);
}
for (const folder of values["allow-local-path"]) {
  if (!path.isAbsolute(folder) || !existsSync(folder)) {
    console.error(`--allow-local-path ${JSON.stringify(folder)} must be an existing absolute folder`);
    process.exit(2);
  }
}
const port = portFlag("port", "EBB_PORT");
const s3Port = portFlag("s3-port", "EBB_S3_PORT");
const dynamoDbPort = portFlag("dynamodb-port", "EBB_DYNAMODB_PORT");
const started = Date.now();
createOwnerOnly();
await removeLeftoverScratchFolders();
if (values["data-dir"] !== "memory") await restrictToOwner(path.resolve(values["data-dir"]));

const { aws, storage } = await startEmbeddedEbb({
  dataDir: values["data-dir"],
  ...(s3Port !== undefined ? { s3Port } : {}),
  ...(dynamoDbPort !== undefined ? { dynamoDbPort } : {}),
});
let plane: LocalControlPlane;
let token: ApiToken;
let landing: string;
let kinesis: RunningStandIn | undefined;
try {
  if (values.kinesis) kinesis = await startKinesisMock();
  token = await keepApiToken(aws.dataDir);
  landing = path.join(token.dir, "landing");
  await mkdir(landing, { recursive: true });
  // In memory the stand-ins' key pair has no data folder to live in: beside the token, then.
  if (aws.dataDir === undefined) await writeStandInCredentials(token.dir, aws.endpoints.credentials);
  plane = await startLocalControlPlane({
    endpoints: aws.endpoints,
    storage,
    ebb: await loadSynthesizedEbb(),
    token: token.token,
    uiAssets: UI_ASSETS,
    localRoots: [landing, ...values["allow-local-path"]],
    log: { file: localLogFile(aws.dataDir ?? token.dir), console: values.verbose },
    ...(port !== undefined ? { port } : {}),
    ...(webhook !== undefined ? { webhook } : {}),
  });
  // The SDK's own per-service endpoint setting: a source's `endpoint` still wins.
  if (kinesis) process.env["AWS_ENDPOINT_URL_KINESIS"] = kinesis.endpoint;
} catch (error) {
  await kinesis?.stop();
  await aws.stop();
  throw error;
}
// The updates the previous run left RUNNING died with it: fail them now, not at the next start.
const lost = await releaseStaleUpdates(controlPlane());
if (lost.length > 0)
  console.log(
    `marked ${lost.length} update(s) the previous run left unfinished FAILED (EXECUTION_LOST): ${lost.join(", ")}`,
  );
const signIn = path.join(token.dir, "ui-sign-in");
await writeFile(signIn, `${plane.endpoint}/#token=${token.token}\n`, { mode: 0o600 });
console.log(
  describe(
    aws,
    storage,
    plane,
    token,
    [landing, ...values["allow-local-path"]],
    kinesis,
    Date.now() - started,
  ),
);

/**
 * How long stopping may take before the process exits anyway: a stand-in that died (a full disk) or a
 * task stuck on one must not leave `npm start` half-stopped, holding the data folder. The stand-ins
 * exit with this process (parent-watchdog.ts), and the data folder's lock goes with it.
 */
const STOP_DEADLINE_MS = 15_000;

let stopping = false;
const stop = (exitCode: number): void => {
  if (stopping) return;
  stopping = true;
  console.log("\nstopping…");
  setTimeout(() => {
    console.error(`not stopped after ${STOP_DEADLINE_MS / 1000} s: exiting now`);
    process.exit(exitCode === 0 ? 1 : exitCode);
  }, STOP_DEADLINE_MS).unref();
  // Statements still running (a runaway query) would keep the process alive past Ctrl-C.
  interruptAllSandboxes();
  const step = (what: string, work: () => Promise<unknown>) =>
    work().catch((error: unknown) => console.error(`while stopping ${what}: ${String(error)}`));
  void (async () => {
    await step("the control plane", () => plane.stop());
    await step("the Kinesis stand-in", async () => kinesis?.stop());
    await step("the stand-ins", () => aws.stop());
    if (aws.dataDir === undefined)
      await step("the in-memory data folder", () => rm(token.dir, { recursive: true, force: true }));
    console.log("stopped");
    process.exit(exitCode);
  })();
};
for (const signal of ["SIGINT", "SIGTERM"] as const) process.on(signal, () => stop(0));
for (const crashed of [aws.crashed, ...(kinesis ? [kinesis.crashed] : [])]) {
  void crashed.then((what) => {
    console.error(`\n${what}`);
    stop(1);
  });
}

/** A port from `--<flag>`, else the environment variable; exits saying which when it is not one. */
function portFlag(flag: "port" | "s3-port" | "dynamodb-port", variable: string): number | undefined {
  const text = values[flag];
  if (text === undefined) return undefined;
  const number = Number(text);
  if (Number.isInteger(number) && number > 0 && number < 65536) return number;
  console.error(`--${flag} (or ${variable}) must be a port number, not ${JSON.stringify(text)}`);
  process.exit(2);
}

function describe(
  aws: EmbeddedAws,
  storage: StorageNames,
  plane: LocalControlPlane,
  token: ApiToken,
  localRoots: readonly string[],
  kinesis: RunningStandIn | undefined,
  elapsedMs: number,
): string {
  const { endpoints } = aws;
  return [
    `Ebb is up (${(elapsedMs / 1000).toFixed(1)} s)`,
    `  UI          ${plane.endpoint}/   (sign-in link: cat ${shellQuote(path.join(token.dir, "ui-sign-in"))})`,
    `  API         ${plane.endpoint}   (Authorization: Bearer $EBB_TOKEN)`,
    `  S3          ${endpoints.s3Endpoint}`,
    `  DynamoDB    ${endpoints.dynamoDbEndpoint}`,
    ...(kinesis ? [`  Kinesis     ${kinesis.endpoint}   (kinesis sources without an endpoint read it)`] : []),
    `  bucket      ${storage.bucket}`,
    `  tables      Pipelines   ${storage.pipelinesTable}`,
    `              Updates     ${storage.updatesTable}`,
    `              Checkpoints ${storage.checkpointsTable}`,
    `              EventLog    ${storage.eventLogTable}`,
    `  data        ${aws.dataDir ?? "in memory: gone on stop"}`,
    `  local paths ${localRoots.join(", ")}   (sources may read these folders; more with --allow-local-path)`,
    "",
    "Paste into another shell (the ebb CLI, the AWS CLI and SDKs read these):",
    `export EBB_ENDPOINT=${plane.endpoint}`,
    `export EBB_TOKEN=$(cat ${shellQuote(token.file)})`,
    `export EBB_BUCKET=${storage.bucket}`,
    `export AWS_ENDPOINT_URL_S3=${endpoints.s3Endpoint}`,
    `export AWS_ENDPOINT_URL_DYNAMODB=${endpoints.dynamoDbEndpoint}`,
    ...(kinesis ? [`export AWS_ENDPOINT_URL_KINESIS=${kinesis.endpoint}`] : []),
    `export AWS_REGION=${endpoints.region}`,
    `export AWS_ACCESS_KEY_ID=${endpoints.credentials.accessKeyId}`,
    `export AWS_SECRET_ACCESS_KEY=$(cat ${shellQuote(path.join(token.dir, SECRET_ACCESS_KEY_FILE))})`,
    "",
    "Ctrl-C to stop.",
  ].join("\n");
}
