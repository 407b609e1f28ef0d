import { mkdir, mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import type { AwsEndpoints } from "../../shared/store/aws-clients.ts";
import { lockDataDir } from "./data-dir-lock.ts";
import { startDynamoDbLocal } from "./dynamodb-local.ts";
import { startS3Server } from "./s3-server.ts";
import type { RunningStandIn } from "./stand-in-process.ts";

/** s3rver knows only this key pair; DynamoDB Local accepts any. Both ignore the signature's secret. */
export const EMBEDDED_CREDENTIALS = { accessKeyId: "S3RVER", secretAccessKey: "S3RVER" } as const;
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
}

/** The running stand-ins. */
export interface EmbeddedAws {
  /** Everything a client needs; pass to `createS3Client` / `createDocumentClient`. */
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
 * one. Creates no bucket or table: see provision-template.ts.
 */
export async function startEmbeddedAws(options: EmbeddedAwsOptions = {}): Promise<EmbeddedAws> {
  const inMemory = options.dataDir === "memory";
  const dataDir = inMemory ? undefined : path.resolve(options.dataDir ?? DEFAULT_DATA_DIR);
  const s3Directory = dataDir
    ? path.join(dataDir, "s3")
    : await mkdtemp(path.join(os.tmpdir(), `ebb-s3-${process.pid}-`));
  if (dataDir) await mkdir(dataDir, { recursive: true });
  const unlock = dataDir ? await lockDataDir(dataDir) : async () => undefined;

  const started = await Promise.allSettled([
    startS3Server({ directory: s3Directory, removeOnExit: inMemory }),
    startDynamoDbLocal(dataDir ? { dbPath: path.join(dataDir, "dynamodb") } : {}),
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
      credentials: EMBEDDED_CREDENTIALS,
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
