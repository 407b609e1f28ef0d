import { writeFile } from "node:fs/promises";
import path from "node:path";
import { S3Client } from "@aws-sdk/client-s3";
import { startBenchPlane } from "./bench-plane.ts";

/**
 * AWS requests per update, and what they cost (issue 18 "Request counts are a benchmark"), on the
 * embedded local runtime. Every AWS SDK client's `send` is counted, by service and command.
 *
 * Scenario: `raw` (auto_loader, one new file per update) → `clean` (stream) → `total` (a
 * materialized view over raw). `EBB_BENCH_AGE` updates run (default 60); the figures are the
 * requests of update 10 and of the last update, and the mean of the 10 updates ending at each
 * (auto-compaction runs every 10 small files, so single updates differ by phase). Then one update
 * with nothing new.
 *
 * Not counted yet: Step Functions state transitions and Lambda invocations (the local runtime runs
 * the state machine in process); the estimate below covers S3 and DynamoDB requests only.
 */

const AGE = Number(process.env["EBB_BENCH_AGE"] ?? 60);
const DATASETS = 3;

/** us-east-1 list prices, as published in November 2025 (USD). */
const PRICES = {
  date: "2025-11",
  s3WritePer1k: 0.005, // PUT, COPY, POST, LIST
  s3ReadPer1k: 0.0004, // GET, HEAD and the rest
  dynamoWritePerMillion: 0.625, // on-demand write request units
  dynamoReadPerMillion: 0.125, // on-demand read request units
};
const S3_WRITES = new Set([
  "PutObjectCommand",
  "CopyObjectCommand",
  "ListObjectsV2Command",
  "ListObjectsCommand",
  "CreateMultipartUploadCommand",
  "UploadPartCommand",
  "CompleteMultipartUploadCommand",
  "DeleteObjectsCommand",
]);
const DYNAMO_READS = new Set([
  "GetCommand",
  "QueryCommand",
  "ScanCommand",
  "BatchGetCommand",
  "GetItemCommand",
]);

type Counts = Map<string, number>;
let counts: Counts = new Map();

/** Counts each SDK request: every client (S3, DynamoDB, Step Functions) inherits `send` from one base. */
function installCounter(): void {
  const base = Object.getPrototypeOf(S3Client.prototype) as {
    send: (this: { constructor: { name: string } }, command: { constructor: { name: string } }) => unknown;
  };
  const send = base.send;
  base.send = function (this: { constructor: { name: string } }, command, ...rest: unknown[]) {
    const key = `${this.constructor.name.replace(/Client$/, "")} ${command.constructor.name}`;
    counts.set(key, (counts.get(key) ?? 0) + 1);
    return (send as (...args: unknown[]) => unknown).call(this, command, ...rest);
  } as typeof base.send;
}

function total(c: Counts): number {
  return [...c.values()].reduce((sum, n) => sum + n, 0);
}

/** Dollars for the requests in `c`, by S3/DynamoDB price class. */
function dollars(c: Counts): number {
  let cost = 0;
  for (const [key, n] of c) {
    const [service, command] = key.split(" ") as [string, string];
    if (service === "S3")
      cost += (n / 1000) * (S3_WRITES.has(command) ? PRICES.s3WritePer1k : PRICES.s3ReadPer1k);
    if (service.startsWith("DynamoDB")) {
      cost +=
        (n / 1e6) * (DYNAMO_READS.has(command) ? PRICES.dynamoReadPerMillion : PRICES.dynamoWritePerMillion);
    }
  }
  return cost;
}

function mean(updates: readonly Counts[]): number {
  return updates.reduce((sum, c) => sum + total(c), 0) / updates.length;
}

function byCommand(c: Counts): string {
  return [...c]
    .sort((a, b) => b[1] - a[1])
    .map(([key, n]) => `${key} ${n}`)
    .join(", ");
}

export async function run(): Promise<void> {
  installCounter();
  const { plane, client, landing, close } = await startBenchPlane("ebb-bench-cost-");
  try {
    const { pipeline_id: pipelineId } = await client.createPipeline({
      name: "bench cost",
      catalog: "bench",
      schema: "cost",
      definition: {
        datasets: [
          {
            type: "streaming_table",
            name: "raw",
            flows: [
              {
                name: "ingest",
                source: { type: "auto_loader", path: landing, format: "json", schema: { id: "BIGINT" } },
                sql: "SELECT id FROM source",
              },
            ],
          },
          {
            type: "streaming_table",
            name: "clean",
            flows: [
              { name: "copy", source: { type: "stream", dataset: "raw" }, sql: "SELECT id FROM source" },
            ],
          },
          { type: "materialized_view", name: "total", sql: "SELECT count(*) AS n FROM raw" },
        ],
      },
    });
    const update = async (): Promise<Counts> => {
      counts = new Map();
      const { update_id } = await client.startUpdate(pipelineId);
      await plane.stepFunctions.settled(); // not polling get-update: its reads are not the update's
      const counted = counts;
      counts = new Map();
      const { update: result } = await client.getUpdate(pipelineId, update_id);
      if (result.state !== "COMPLETED")
        throw new Error(`bench update ${result.state}: ${result.error?.message}`);
      return counted;
    };
    const perUpdate: Counts[] = [];
    for (let i = 1; i <= AGE; i++) {
      await writeFile(path.join(landing, `${i}.json`), JSON.stringify({ id: i }) + "\n");
      perUpdate.push(await update());
    }
    const idle = await update();

    const u10 = perUpdate[9]!;
    const last = perUpdate[AGE - 1]!;
    const window10 = mean(perUpdate.slice(0, 10));
    const windowLast = mean(perUpdate.slice(AGE - 10));
    console.log(`requests of update 10: ${total(u10)} (${byCommand(u10)})`);
    console.log(`requests of update ${AGE}: ${total(last)} (${byCommand(last)})`);
    console.log(
      `cost flat with age: update ${AGE} / update 10 = ${(total(last) / total(u10)).toFixed(2)}; ` +
        `mean of updates ${AGE - 9}-${AGE} / mean of updates 1-10 = ${(windowLast / window10).toFixed(2)} (target ≤ 1.1)`,
    );
    const idleS3 = [...idle].filter(([k]) => k.startsWith("S3")).reduce((s, [, n]) => s + n, 0);
    const idleDynamo = [...idle].filter(([k]) => k.startsWith("DynamoDB")).reduce((s, [, n]) => s + n, 0);
    console.log(
      `update with nothing new: ${total(idle)} requests; per dataset ${(idleS3 / DATASETS).toFixed(1)} S3, ` +
        `${(idleDynamo / DATASETS).toFixed(1)} DynamoDB (targets ≤ 2 and ≤ 4) (${byCommand(idle)})`,
    );
    const month = 30 * 24 * 12; // an update every 5 minutes
    const lateCost = perUpdate.slice(AGE - 10).reduce((s, c) => s + dollars(c), 0) / 10;
    const earlyCost = perUpdate.slice(0, 10).reduce((s, c) => s + dollars(c), 0) / 10;
    console.log(
      `monthly estimate, ${DATASETS}-dataset pipeline updating every 5 minutes (${month} updates), S3 + DynamoDB ` +
        `requests only, us-east-1 list prices of ${PRICES.date} (S3 $${PRICES.s3WritePer1k}/1k PUT/LIST, ` +
        `$${PRICES.s3ReadPer1k}/1k GET; DynamoDB on-demand $${PRICES.dynamoWritePerMillion}/M writes, ` +
        `$${PRICES.dynamoReadPerMillion}/M reads): at updates 1-10 $${(earlyCost * month).toFixed(2)}, ` +
        `at updates ${AGE - 9}-${AGE} $${(lateCost * month).toFixed(2)}`,
    );
  } finally {
    await close();
  }
}
