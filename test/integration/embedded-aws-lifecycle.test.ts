import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import {
  CreateTableCommand,
  DynamoDBClient,
  GetItemCommand,
  ListTablesCommand,
  PutItemCommand,
} from "@aws-sdk/client-dynamodb";
import { CreateBucketCommand, GetObjectCommand, PutObjectCommand } from "@aws-sdk/client-s3";
import { describe, expect, it, vi } from "vitest";
import { startEmbeddedAws, type EmbeddedAws } from "../../infra/local/embedded-aws.ts";
import { isRunning, nodeScript } from "../../infra/local/stand-in-process.ts";
import { createS3Client } from "../../shared/store/aws-clients.ts";

const dynamoDb = (aws: EmbeddedAws) =>
  new DynamoDBClient({
    region: aws.endpoints.region,
    credentials: aws.endpoints.credentials,
    endpoint: aws.endpoints.dynamoDbEndpoint,
  });

/** Waits until none of `pids` runs and `folder` is gone. */
async function expectAllGone(pids: readonly number[], folder: string): Promise<void> {
  await vi.waitFor(
    () => {
      expect(pids.filter(isRunning)).toEqual([]);
      expect(existsSync(folder)).toBe(false);
    },
    { timeout: 15_000, interval: 100 },
  );
}

// Each test starts its own stand-ins; concurrently, so the starts overlap.
describe.concurrent("embedded AWS lifecycle", () => {
  it("comes up from nothing, keeps data in its folder across a restart, and stop() leaves no process", async () => {
    const dataDir = await mkdtemp(path.join(os.tmpdir(), "ebb-data-"));
    try {
      const first = await startEmbeddedAws({ dataDir });
      try {
        expect(first.pids).toHaveLength(3); // the S3 process, the tether, the JVM
        expect(first.pids.every(isRunning)).toBe(true);
        expect((await dynamoDb(first).send(new ListTablesCommand({}))).TableNames).toEqual([]);
        // One database file, one DynamoDB Local.
        await expect(startEmbeddedAws({ dataDir })).rejects.toThrow(`is in use by process ${process.pid}`);
        await createS3Client(first.endpoints).send(new CreateBucketCommand({ Bucket: "kept" }));
        await createS3Client(first.endpoints).send(
          new PutObjectCommand({ Bucket: "kept", Key: "a/b", Body: "kept" }),
        );
        await dynamoDb(first).send(
          new CreateTableCommand({
            TableName: "Kept",
            KeySchema: [{ AttributeName: "id", KeyType: "HASH" }],
            AttributeDefinitions: [{ AttributeName: "id", AttributeType: "S" }],
            BillingMode: "PAY_PER_REQUEST",
          }),
        );
        await dynamoDb(first).send(new PutItemCommand({ TableName: "Kept", Item: { id: { S: "x" } } }));
      } finally {
        await first.stop();
      }
      // stop() has waited for the exits: nothing to poll for.
      expect(first.pids.filter(isRunning)).toEqual([]);
      const second = await startEmbeddedAws({ dataDir });
      try {
        const object = await createS3Client(second.endpoints).send(
          new GetObjectCommand({ Bucket: "kept", Key: "a/b" }),
        );
        expect(await object.Body?.transformToString()).toBe("kept");
        const item = await dynamoDb(second).send(
          new GetItemCommand({ TableName: "Kept", Key: { id: { S: "x" } } }),
        );
        expect(item.Item).toEqual({ id: { S: "x" } });
      } finally {
        await second.stop();
      }
      expect(second.pids.filter(isRunning)).toEqual([]);
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
  });

  it("leaves no process or folder behind when its owner is killed with SIGKILL", async () => {
    const script = fileURLToPath(new URL("../support/embedded-aws-owner.ts", import.meta.url));
    const owner = spawn(...nodeScript(script, []), { stdio: ["ignore", "pipe", "inherit"] });
    const [line] = await new Promise<string[]>((resolve, reject) => {
      createInterface({ input: owner.stdout }).once("line", (first) => resolve([first]));
      owner.once("exit", (code) =>
        reject(new Error(`the owner exited (${code}) before starting the stand-ins`)),
      );
    });
    const { pids, s3Directory } = JSON.parse(line ?? "") as { pids: number[]; s3Directory: string };
    expect(pids).toHaveLength(3);
    expect(pids.every(isRunning)).toBe(true);

    owner.kill("SIGKILL");
    await expectAllGone(pids, s3Directory);
  });
});
