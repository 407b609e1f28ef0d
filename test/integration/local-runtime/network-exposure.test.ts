import { execFileSync, type ChildProcess } from "node:child_process";
import { readFileSync } from "node:fs";
import net from "node:net";
import os from "node:os";
import { DynamoDBClient, ListTablesCommand } from "@aws-sdk/client-dynamodb";
import { ListBucketsCommand, S3Client } from "@aws-sdk/client-s3";
import { DescribeExecutionCommand, SFNClient } from "@aws-sdk/client-sfn";
import {
  CreateStreamCommand,
  DescribeStreamSummaryCommand,
  KinesisClient,
  PutRecordsCommand,
} from "@aws-sdk/client-kinesis";
import { NodeHttpHandler } from "@smithy/node-http-handler";
import { EbbClient } from "../../../shared/client/ebb-client.ts";
import { bearerAuth } from "../../../shared/client/request-signer.ts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { isLoopback, listeningSockets, processTree } from "../../support/listening-sockets.ts";
import { startRuntime, stopRuntime, type Banner } from "../../support/npm-start.ts";

/**
 * `npm start -- --kinesis` as a user runs it (in memory): nothing it starts listens beyond loopback, a
 * connection to the machine's own network address is refused, and the S3 stand-in and the Step
 * Functions endpoint refuse requests not signed with the credentials its banner exports, and so does
 * DynamoDB (its front; DynamoDB Local itself answers only the front, also to another OS user). A stream put
 * on the Kinesis stand-in it exports is read by a pipeline whose source names no endpoint.
 */

let child: ChildProcess;
let banner: Banner;

beforeAll(async () => {
  ({ child, banner } = await startRuntime(["--data-dir", "memory", "--kinesis"]));
});

afterAll(() => stopRuntime(child), 60_000);

describe("npm start on the network", () => {
  it("listens on loopback only, in every process it starts", () => {
    const sockets = listeningSockets(processTree(child.pid!));
    // The API, the Step Functions endpoint, S3, DynamoDB Local, Kinesis.
    expect(sockets.length).toBeGreaterThanOrEqual(5);
    expect(sockets.filter((socket) => !isLoopback(socket.address))).toEqual([]);
    const ports = sockets.map((socket) => socket.port);
    for (const name of [
      "EBB_ENDPOINT",
      "AWS_ENDPOINT_URL_S3",
      "AWS_ENDPOINT_URL_DYNAMODB",
      "AWS_ENDPOINT_URL_KINESIS",
    ])
      expect(ports).toContain(Number(new URL(banner.exports[name]!).port));
  });

  const outside = Object.values(os.networkInterfaces())
    .flat()
    .find((entry) => entry && !entry.internal && entry.family === "IPv4")?.address;

  it.skipIf(outside === undefined)(
    `refuses connections to the machine's own network address (${outside ?? "none here"})`,
    async () => {
      const ports = listeningSockets(processTree(child.pid!)).map((socket) => socket.port);
      for (const port of ports) await expect(connect(outside!, port)).rejects.toThrow(/ECONNREFUSED/);
      // The same ports answer on loopback, so the refusal above is the address, not a dead port.
      for (const port of ports) await expect(connect("127.0.0.1", port)).resolves.toBeUndefined();
    },
  );

  it("S3 refuses unsigned requests and other keys, and serves the exported credentials", async () => {
    const endpoint = banner.exports["AWS_ENDPOINT_URL_S3"]!;
    const unsigned = await fetch(`${endpoint}/${banner.exports["EBB_BUCKET"]}?list-type=2`);
    expect(unsigned.status).toBe(403);
    expect(await unsigned.text()).toContain("<Code>MissingAuthenticationToken</Code>");

    const s3 = (credentials: Banner["credentials"]) =>
      new S3Client({ endpoint, region: banner.exports["AWS_REGION"]!, credentials, forcePathStyle: true });
    const wrongSecret = { ...banner.credentials, secretAccessKey: "not-the-secret" };
    await expect(s3(wrongSecret).send(new ListBucketsCommand({}))).rejects.toMatchObject({
      name: "SignatureDoesNotMatch",
    });
    await expect(
      s3({ accessKeyId: "S3RVER", secretAccessKey: "S3RVER" }).send(new ListBucketsCommand({})),
    ).rejects.toMatchObject({ name: "InvalidAccessKeyId" });
    const listed = await s3(banner.credentials).send(new ListBucketsCommand({}));
    expect(listed.Buckets?.map((bucket) => bucket.Name)).toContain(banner.exports["EBB_BUCKET"]);
  });

  it("the Step Functions endpoint refuses unsigned requests and other keys", async () => {
    const apiPort = Number(new URL(banner.exports["EBB_ENDPOINT"]!).port);
    const dynamoDbPort = Number(new URL(banner.exports["AWS_ENDPOINT_URL_DYNAMODB"]!).port);
    const [sfnPort] = listeningSockets([child.pid!])
      .map((socket) => socket.port)
      .filter((port) => port !== apiPort && port !== dynamoDbPort);
    const endpoint = `http://127.0.0.1:${sfnPort}`;
    const unsigned = await fetch(endpoint, {
      method: "POST",
      headers: { "x-amz-target": "AWSStepFunctions.DescribeExecution" },
      body: JSON.stringify({ executionArn: "arn:aws:states:us-east-1:000000000000:execution:x:y" }),
    });
    expect(unsigned.status).toBe(403);
    expect(await unsigned.json()).toMatchObject({ __type: "MissingAuthenticationToken" });

    const sfn = (credentials: Banner["credentials"]) =>
      new SFNClient({ endpoint, region: banner.exports["AWS_REGION"]!, credentials, maxAttempts: 1 });
    const describe = new DescribeExecutionCommand({
      executionArn: "arn:aws:states:us-east-1:000000000000:execution:nothing:here",
    });
    await expect(
      sfn({ ...banner.credentials, secretAccessKey: "not-the-secret" }).send(describe),
    ).rejects.toMatchObject({ name: "SignatureDoesNotMatch" });
    // Signed right, the request reaches the state machine, which knows no such execution.
    await expect(sfn(banner.credentials).send(describe)).rejects.not.toMatchObject({
      name: "SignatureDoesNotMatch",
    });
  });

  it("DynamoDB refuses unsigned requests and other keys, and DynamoDB Local answers only its front", async () => {
    const endpoint = banner.exports["AWS_ENDPOINT_URL_DYNAMODB"]!;
    const listTables = {
      method: "POST",
      headers: {
        "x-amz-target": "DynamoDB_20120810.ListTables",
        "content-type": "application/x-amz-json-1.0",
      },
      body: "{}",
    };
    const unsigned = await fetch(endpoint, listTables);
    expect(unsigned.status).toBe(400);
    expect(await unsigned.json()).toMatchObject({
      __type: expect.stringMatching(/MissingAuthenticationToken/),
    });

    const dynamodb = (credentials: Banner["credentials"]) =>
      new DynamoDBClient({ endpoint, region: banner.exports["AWS_REGION"]!, credentials, maxAttempts: 1 });
    await expect(
      dynamodb({ ...banner.credentials, secretAccessKey: "not-the-secret" }).send(new ListTablesCommand({})),
    ).rejects.toMatchObject({ name: "InvalidSignatureException" });
    await expect(
      dynamodb({ accessKeyId: "local", secretAccessKey: "local" }).send(new ListTablesCommand({})),
    ).rejects.toMatchObject({ name: "UnrecognizedClientException" });
    const { TableNames } = await dynamodb(banner.credentials).send(new ListTablesCommand({}));
    expect(TableNames?.length).toBeGreaterThan(0);

    // DynamoDB Local's own port (the one no banner names) refuses whoever is not its front.
    const jvm = processTree(child.pid!).filter((pid) =>
      readFileSync(`/proc/${pid}/cmdline`, "utf8").includes("LoopbackDynamoDbLocal"),
    );
    const jvmPorts = listeningSockets(jvm).map((socket) => socket.port);
    expect(jvmPorts).toHaveLength(1);
    const direct = await Promise.all(
      jvmPorts.map(async (port) => (await fetch(`http://127.0.0.1:${port}/`, listTables)).status),
    );
    expect(direct).toEqual([403]);

    // Another OS user (where this test may switch to one) reaches neither with the tools at hand.
    const asNobody = (url: string) =>
      execFileSync(
        "setpriv",
        [
          "--reuid=65534",
          "--regid=65534",
          "--clear-groups",
          "curl",
          "-s",
          "-o",
          "/dev/null",
          "-w",
          "%{http_code}",
          "-X",
          "POST",
          "-H",
          "x-amz-target: DynamoDB_20120810.ListTables",
          "-H",
          "content-type: application/x-amz-json-1.0",
          "-d",
          "{}",
          url,
        ],
        { encoding: "utf8" },
      );
    if (process.getuid?.() === 0) {
      expect(asNobody(endpoint)).toBe("400");
      for (const port of jvmPorts) expect(asNobody(`http://127.0.0.1:${port}/`)).not.toBe("200");
    }
  });

  it("reads a stream put on the exported Kinesis endpoint, from a source that names none", async () => {
    const kinesis = new KinesisClient({
      endpoint: banner.exports["AWS_ENDPOINT_URL_KINESIS"]!,
      region: banner.exports["AWS_REGION"]!,
      credentials: banner.credentials,
      requestHandler: new NodeHttpHandler(),
    });
    await kinesis.send(new CreateStreamCommand({ StreamName: "clicks", ShardCount: 2 }));
    for (let tries = 0; ; tries++) {
      const { StreamDescriptionSummary } = await kinesis.send(
        new DescribeStreamSummaryCommand({ StreamName: "clicks" }),
      );
      if (StreamDescriptionSummary?.StreamStatus === "ACTIVE") break;
      expect(tries).toBeLessThan(100);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    await kinesis.send(
      new PutRecordsCommand({
        StreamName: "clicks",
        Records: [1, 2, 3].map((id) => ({
          PartitionKey: `u${id}`,
          Data: Buffer.from(JSON.stringify({ id })),
        })),
      }),
    );
    const ebb = new EbbClient({ endpoint: banner.exports["EBB_ENDPOINT"]!, auth: bearerAuth(banner.token) });
    const { pipeline_id } = await ebb.createPipeline({
      name: "local kinesis",
      catalog: "web",
      schema: "local",
      definition: {
        datasets: [
          {
            type: "streaming_table",
            name: "clicks",
            flows: [
              {
                name: "ingest",
                source: { type: "kinesis", stream: "clicks", data_format: "json", schema: { id: "BIGINT" } },
                sql: "SELECT data.id AS id FROM source",
              },
            ],
          },
        ],
      },
    });
    const { update_id } = await ebb.startUpdate(pipeline_id);
    const update = await ebb.waitForUpdate(pipeline_id, update_id, { intervalMs: 200 });
    expect(update.state, update.error?.message).toBe("COMPLETED");
    const { rows } = await ebb.query("web.local.clicks", { sql: "SELECT id FROM t ORDER BY id" });
    expect(rows.map((row) => Number(row["id"]))).toEqual([1, 2, 3]);
  });
});

function connect(host: string, port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const socket = net.connect({ host, port, timeout: 5_000 });
    socket.once("connect", () => {
      socket.destroy();
      resolve();
    });
    socket.once("timeout", () => {
      socket.destroy();
      reject(new Error(`ETIMEDOUT ${host}:${port}`));
    });
    socket.once("error", reject);
  });
}
