import { mkdir, mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import type { AwsEndpoints } from "../../shared/store/aws-clients.ts";
import { lockDataDir } from "./data-dir-lock.ts";
import { startDynamoDbLocal } from "./dynamodb-local.ts";
import { startS3Server } from "./s3-server.ts";
import { keepStandInCredentials } from "./stand-in-credentials.ts";
import type { RunningStandIn } from "./stand-in-process.ts";

export const EMBEDDED_REGION = "us-east-1";
/** Where `npm start` keeps its data unless told otherwise (git-ignored). */
export const DEFAULT_DATA_DIR = ".ebb";

export interface EmbeddedAwsOptions {
  /**
   * Folder for the data (`s3/` and `dynamodb/` inside), kept between runs; or `"memory"`: nothing
   * survives `stop()` (S3 then lives in a temporary folder that its process removes on exit).
   * @default ".ebb" in the current directory
   */
  readonly dataDir?: string;
  /** Pin the S3 stand-in's port, so pasted exports survive a restart. @default any free port */
  readonly s3Port?: number;
  /** Pin the port DynamoDB is reached on (its signed front's). @default any free port */
  readonly dynamoDbPort?: number;
}

/** The running stand-ins. */
export interface EmbeddedAws {
  /**
   * Everything a client needs; pass to `createS3Client` / `createDocumentClient`. The credentials are
   * this data folder's own (stand-in-credentials.ts): the S3 stand-in refuses any other signature.
   */
  readonly endpoints: Required<AwsEndpoints>;
  /** The data folder, absolute; undefined in memory. */
  readonly dataDir: string | undefined;
  /** Where S3 keeps objects: `<dataDir>/s3`, or in memory a temporary folder removed on exit. */
  readonly s3Directory: string;
  /** Every process started, for checking that none is left behind. */
  readonly pids: readonly number[];
  /** Resolves with what happened if a stand-in exits without `stop()`; never otherwise. */
  readonly crashed: Promise<string>;
  /** Stops both stand-ins and waits until their processes have exited. */
  stop(): Promise<void>;
}

/**
 * Starts DynamoDB Local and the embedded S3 side by side, each in child processes that die with this
 * one, both listening on 127.0.0.1 only. Creates no bucket or table: see provision-template.ts.
 */
export async function startEmbeddedAws(options: EmbeddedAwsOptions = {}): Promise<EmbeddedAws> {
  const inMemory = options.dataDir === "memory";
  const dataDir = inMemory ? undefined : path.resolve(options.dataDir ?? DEFAULT_DATA_DIR);
  const s3Directory = dataDir
    ? path.join(dataDir, "s3")
    : await mkdtemp(path.join(os.tmpdir(), `ebb-s3-${process.pid}-`));
  if (dataDir) await mkdir(dataDir, { recursive: true });
  const unlock = dataDir ? await lockDataDir(dataDir) : async () => undefined;
  const credentials = await keepStandInCredentials(dataDir);

  const started = await Promise.allSettled([
    startS3Server({
      directory: s3Directory,
      removeOnExit: inMemory,
      credentials,
      ...(options.s3Port !== undefined ? { port: options.s3Port } : {}),
    }),
    startDynamoDbLocal({
      credentials,
      ...(dataDir ? { dbPath: path.join(dataDir, "dynamodb") } : {}),
      ...(options.dynamoDbPort !== undefined ? { port: options.dynamoDbPort } : {}),
    }),
  ]);
  const running = started.flatMap((result) => (result.status === "fulfilled" ? [result.value] : []));
  const stop = async (): Promise<void> => {
    await Promise.all(running.map((standIn) => standIn.stop()));
    await unlock();
  };
  const failure = started.find((result) => result.status === "rejected");
  if (failure) {
    await stop();
    if (inMemory) await rm(s3Directory, { recursive: true, force: true });
    throw failure.reason;
  }
  const [s3, dynamodb] = running as [RunningStandIn, RunningStandIn];
  return {
    endpoints: {
      region: EMBEDDED_REGION,
      credentials,
      s3Endpoint: s3.endpoint,
      dynamoDbEndpoint: dynamodb.endpoint,
    },
    dataDir,
    s3Directory,
    pids: [...s3.pids, ...dynamodb.pids],
    crashed: Promise.race([s3.crashed, dynamodb.crashed]),
    stop,
  };
}
