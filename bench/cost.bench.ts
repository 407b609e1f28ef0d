import { RequestCounter, requestsOf } from "../infra/local/request-counter.ts";
import { startBenchPlane } from "./bench-plane.ts";
import { DynamoCapacity } from "./dynamo-capacity.ts";

/**
 * AWS requests per update, and what they cost (issue 18 "Request counts are a benchmark"), on the
 * embedded local runtime. Every AWS SDK client's `send` is counted, by service and command.
 *
 * Scenario, the 5-dataset pipeline of issue 18's monthly estimate: `raw` (auto_loader, one new file
 * per update) → `clean` (stream) → `enriched` (stream), and two materialized views: `total` over
 * `raw`, `by_bucket` over `clean`. `EBB_BENCH_AGE` updates run (default 60); the figures are the
 * requests of update 10 and of the last update, and the mean of the 10 updates ending at each
 * (auto-compaction runs every 10 small files, so single updates differ by phase). Then one update
 * with nothing new. Besides the SDK's requests, the local Step Functions counts what AWS bills an
 * execution by: state transitions, and the Lambda invocations of its tasks with their duration.
 * DynamoDB is priced by the request units on-demand mode bills (dynamo-capacity.ts: a transaction's
 * items twice, reads by 4 KB, writes by 1 KB), not by request count.
 */

const AGE = Number(process.env["EBB_BENCH_AGE"] ?? 60);
const DATASETS = 5;

/** us-east-1 list prices, as published in November 2025 (USD). */
const PRICES = {
  date: "2025-11",
  s3WritePer1k: 0.005, // PUT, COPY, POST, LIST
  s3ReadPer1k: 0.0004, // GET, HEAD and the rest
  dynamoWritePerMillion: 0.625, // on-demand write request units (WRU)
  dynamoReadPerMillion: 0.125, // on-demand read request units (RRU)
  transitionsPer1k: 0.025, // Step Functions Standard state transitions
  lambdaRequestsPerMillion: 0.2,
  lambdaGbSecond: 0.0000166667, // x86
};
/** Lambda duration is priced as if every task ran at the update tasks' 2048 MB (an upper bound). */
const TASK_MEMORY_GB = 2;
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

/** Requests by "Service Command", and the execution's "StepFunctions transitions" and "Lambda …". */
type Counts = Map<string, number>;
const TRANSITIONS = "StepFunctions transitions";
const INVOCATIONS = "Lambda invocations";
const LAMBDA_MS = "Lambda ms";
// Not "DynamoDB …": requestsOf counts every key of a service as requests.
const DYNAMO_RRU = "RRU DynamoDB";
const DYNAMO_WRU = "WRU DynamoDB";
/** AWS requests (the execution's own figures left out). */
function total(c: Counts): number {
  return [...c].filter(([key]) => !EXECUTION.has(key)).reduce((sum, [, n]) => sum + n, 0);
}
const EXECUTION = new Set([TRANSITIONS, INVOCATIONS, LAMBDA_MS, DYNAMO_RRU, DYNAMO_WRU]);

/**
 * Dollars for what `c` counts: S3 requests by price class, DynamoDB request units, transitions,
 * Lambda requests and time.
 */
function dollars(c: Counts): number {
  let cost = ((c.get(TRANSITIONS) ?? 0) / 1000) * PRICES.transitionsPer1k;
  cost += ((c.get(DYNAMO_RRU) ?? 0) / 1e6) * PRICES.dynamoReadPerMillion;
  cost += ((c.get(DYNAMO_WRU) ?? 0) / 1e6) * PRICES.dynamoWritePerMillion;
  cost += ((c.get(INVOCATIONS) ?? 0) / 1e6) * PRICES.lambdaRequestsPerMillion;
  cost += ((c.get(LAMBDA_MS) ?? 0) / 1000) * TASK_MEMORY_GB * PRICES.lambdaGbSecond;
  for (const [key, n] of c) {
    const [service, command] = key.split(" ") as [string, string];
    if (service === "S3")
      cost += (n / 1000) * (S3_WRITES.has(command) ? PRICES.s3WritePer1k : PRICES.s3ReadPer1k);
  }
  return cost;
}

function mean(updates: readonly Counts[]): number {
  return updates.reduce((sum, c) => sum + total(c), 0) / updates.length;
}

function byCommand(c: Counts): string {
  return [...c]
    .filter(([key]) => !EXECUTION.has(key))
    .sort((a, b) => b[1] - a[1])
    .map(([key, n]) => `${key} ${n}`)
    .join(", ");
}

function execution(c: Counts): string {
  return (
    `${c.get(TRANSITIONS) ?? 0} state transitions, ${c.get(INVOCATIONS) ?? 0} Lambda invocations ` +
    `(${Math.round(c.get(LAMBDA_MS) ?? 0)} ms in process); DynamoDB ${c.get(DYNAMO_RRU) ?? 0} RRU, ` +
    `${c.get(DYNAMO_WRU) ?? 0} WRU`
  );
}

/** Mean dollars per update of the S3 requests and DynamoDB request units alone. */
function requestsOnly(updates: readonly Counts[]): number {
  const storage = (key: string) => !EXECUTION.has(key) || key === DYNAMO_RRU || key === DYNAMO_WRU;
  return (
    updates.reduce((s, c) => s + dollars(new Map([...c].filter(([k]) => storage(k)))), 0) / updates.length
  );
}

/** Mean dollars per update of the state transitions alone. */
function transitionsOnly(updates: readonly Counts[]): number {
  return (
    updates.reduce((s, c) => s + dollars(new Map([[TRANSITIONS, c.get(TRANSITIONS) ?? 0]])), 0) /
    updates.length
  );
}

export async function run(): Promise<void> {
  const counter = RequestCounter.install();
  const capacity = DynamoCapacity.install();
  const { plane, client, s3Landing, close } = await startBenchPlane("ebb-bench-cost-");
  // In the bucket, as on AWS: the auto_loader's listings and reads of it are S3 requests.
  const landing = s3Landing("cost");
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
                source: { type: "auto_loader", path: landing.uri, format: "json", schema: { id: "BIGINT" } },
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
          {
            type: "streaming_table",
            name: "enriched",
            flows: [
              {
                name: "enrich",
                source: { type: "stream", dataset: "clean" },
                sql: "SELECT id, id % 10 AS bucket FROM source",
              },
            ],
          },
          { type: "materialized_view", name: "total", sql: "SELECT count(*) AS n FROM raw" },
          {
            type: "materialized_view",
            name: "by_bucket",
            sql: "SELECT id % 10 AS bucket, count(*) AS n FROM clean GROUP BY 1",
          },
        ],
      },
    });
    const update = async (): Promise<Counts> => {
      counter.take();
      capacity.take();
      const before = plane.stepFunctions.usage;
      const { update_id } = await client.startUpdate(pipelineId);
      await plane.stepFunctions.settled(); // not polling get-update: its reads are not the update's
      const counted = counter.take();
      const after = plane.stepFunctions.usage;
      counted.set(TRANSITIONS, after.transitions - before.transitions);
      counted.set(INVOCATIONS, after.lambdaInvocations - before.lambdaInvocations);
      counted.set(LAMBDA_MS, after.lambdaMilliseconds - before.lambdaMilliseconds);
      const units = capacity.take();
      counted.set(DYNAMO_RRU, units.reads);
      counted.set(DYNAMO_WRU, units.writes);
      const { update: result } = await client.getUpdate(pipelineId, update_id);
      if (result.state !== "COMPLETED")
        throw new Error(`bench update ${result.state}: ${result.error?.message}`);
      return counted;
    };
    const perUpdate: Counts[] = [];
    for (let i = 1; i <= AGE; i++) {
      // Names that sort in arrival order, as producers write them (a sequence number, a timestamp):
      // the auto_loader then lists only after the last one processed (incremental-listing.ts).
      // Written before the update's count starts: the producer's PUT is not Ebb's.
      await landing.store.put(
        `${String(i).padStart(6, "0")}.json`,
        new TextEncoder().encode(`{"id":${i}}\n`),
      );
      perUpdate.push(await update());
    }
    const idle = await update();

    const u10 = perUpdate[9]!;
    const last = perUpdate[AGE - 1]!;
    const window10 = mean(perUpdate.slice(0, 10));
    const windowLast = mean(perUpdate.slice(AGE - 10));
    console.log(`requests of update 10: ${total(u10)} (${byCommand(u10)}); ${execution(u10)}`);
    console.log(`requests of update ${AGE}: ${total(last)} (${byCommand(last)}); ${execution(last)}`);
    console.log(
      `cost flat with age: update ${AGE} / update 10 = ${(total(last) / total(u10)).toFixed(2)}; ` +
        `mean of updates ${AGE - 9}-${AGE} / mean of updates 1-10 = ${(windowLast / window10).toFixed(2)} (target ≤ 1.1)`,
    );
    const idleS3 = requestsOf(idle, "S3");
    const idleDynamo = requestsOf(idle, "DynamoDB");
    console.log(
      `update with nothing new: ${total(idle)} requests; per dataset ${(idleS3 / DATASETS).toFixed(1)} S3, ` +
        `${(idleDynamo / DATASETS).toFixed(1)} DynamoDB (targets ≤ 2 and ≤ 4) (${byCommand(idle)}); ` +
        `${execution(idle)}, ${(((idle.get(TRANSITIONS) ?? 0) - 3) / DATASETS).toFixed(1)} per dataset over 3 ` +
        `(target ≤ 3 + 2 per dataset)`,
    );
    const month = 30 * 24 * 12; // an update every 5 minutes
    const lateCost = perUpdate.slice(AGE - 10).reduce((s, c) => s + dollars(c), 0) / 10;
    const earlyCost = perUpdate.slice(0, 10).reduce((s, c) => s + dollars(c), 0) / 10;
    console.log(
      `monthly estimate, ${DATASETS}-dataset pipeline updating every 5 minutes (${month} updates), ` +
        `us-east-1 list prices of ${PRICES.date} (S3 $${PRICES.s3WritePer1k}/1k PUT/LIST, ` +
        `$${PRICES.s3ReadPer1k}/1k GET; DynamoDB on-demand by request units, not requests: ` +
        `$${PRICES.dynamoWritePerMillion}/M WRU (1 KB written; a transaction's items twice), ` +
        `$${PRICES.dynamoReadPerMillion}/M RRU (4 KB read strongly consistent); Step Functions $${PRICES.transitionsPer1k}/1k transitions; ` +
        `Lambda $${PRICES.lambdaRequestsPerMillion}/M requests, $${PRICES.lambdaGbSecond}/GB-s at ` +
        `${TASK_MEMORY_GB} GB for the in-process task time; no free tier): at updates 1-10 ` +
        `$${(earlyCost * month).toFixed(2)}, at updates ${AGE - 9}-${AGE} $${(lateCost * month).toFixed(2)} ` +
        `(of which S3 + DynamoDB $${(requestsOnly(perUpdate.slice(AGE - 10)) * month).toFixed(2)}, ` +
        `transitions $${(transitionsOnly(perUpdate.slice(AGE - 10)) * month).toFixed(2)})`,
    );
  } finally {
    await close();
  }
}
