import { spawn, type ChildProcess } from "node:child_process";
import { readFileSync } from "node:fs";
import net from "node:net";
import os from "node:os";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { ListBucketsCommand, S3Client } from "@aws-sdk/client-s3";
import { DescribeExecutionCommand, SFNClient } from "@aws-sdk/client-sfn";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { nodeScript } from "../../../infra/local/stand-in-process.ts";
import { isLoopback, listeningSockets, processTree } from "../../support/listening-sockets.ts";

/**
 * `npm start` as a user runs it (in memory): nothing it starts listens beyond loopback, a connection
 * to the machine's own network address is refused, and the S3 stand-in and the Step Functions
 * endpoint refuse requests not signed with the credentials its banner exports.
 */

const START = fileURLToPath(new URL("../../../infra/local/start.ts", import.meta.url));

interface Banner {
  readonly exports: Record<string, string>;
  readonly credentials: { accessKeyId: string; secretAccessKey: string };
}

let child: ChildProcess;
let banner: Banner;

beforeAll(async () => {
  const [command, args] = nodeScript(START, ["--data-dir", "memory"]);
  child = spawn(command, args, { stdio: ["ignore", "pipe", "inherit"] });
  banner = await readBanner(child);
}, 120_000);

afterAll(async () => {
  if (child.exitCode !== null) return;
  const exited = new Promise((resolve) => child.once("exit", resolve));
  child.kill("SIGINT");
  await exited;
}, 60_000);

describe("npm start on the network", () => {
  it("listens on loopback only, in every process it starts", () => {
    const sockets = listeningSockets(processTree(child.pid!));
    // The API, the Step Functions endpoint, S3, DynamoDB Local.
    expect(sockets.length).toBeGreaterThanOrEqual(4);
    expect(sockets.filter((socket) => !isLoopback(socket.address))).toEqual([]);
    const ports = sockets.map((socket) => socket.port);
    for (const name of ["EBB_ENDPOINT", "AWS_ENDPOINT_URL_S3", "AWS_ENDPOINT_URL_DYNAMODB"])
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
    const [sfnPort] = listeningSockets([child.pid!])
      .map((socket) => socket.port)
      .filter((port) => port !== apiPort);
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
});

/** Reads the start banner up to "Ctrl-C to stop.", and the secret key from the file it names. */
async function readBanner(started: ChildProcess): Promise<Banner> {
  const exports: Record<string, string> = {};
  const lines = createInterface({ input: started.stdout! });
  const exited = new Promise<never>((_, reject) =>
    started.once("exit", (code) => reject(new Error(`npm start exited with ${code} before its banner`))),
  );
  const read = (async () => {
    for await (const line of lines) {
      const match = /^export (\w+)=(.*)$/.exec(line);
      if (match) exports[match[1]!] = match[2]!;
      if (line === "Ctrl-C to stop.") return;
    }
  })();
  await Promise.race([read, exited]);
  lines.close();
  started.stdout!.resume();
  const secretFile = /^\$\(cat '(.+)'\)$/.exec(exports["AWS_SECRET_ACCESS_KEY"] ?? "")?.[1];
  if (!secretFile) throw new Error(`the banner exports no secret file: ${JSON.stringify(exports)}`);
  return {
    exports,
    credentials: {
      accessKeyId: exports["AWS_ACCESS_KEY_ID"]!,
      secretAccessKey: readFileSync(secretFile, "utf8").trim(),
    },
  };
}

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
