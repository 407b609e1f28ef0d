import { parseArgs } from "node:util";
import { DEFAULT_DATA_DIR, type EmbeddedAws } from "./embedded-aws.ts";
import { startEmbeddedEbb } from "./embedded-ebb.ts";
import type { StorageNames } from "./provision-ebb.ts";

/**
 * `npm start [-- --data-dir <folder> | --data-dir memory]`: the embedded AWS stand-ins with Ebb's bucket
 * and tables provisioned from the synthesized stack, until Ctrl-C.
 */
const { values } = parseArgs({ options: { "data-dir": { type: "string", default: DEFAULT_DATA_DIR } } });
const started = Date.now();

const { aws, storage } = await startEmbeddedEbb({ dataDir: values["data-dir"] });
console.log(describe(aws, storage, Date.now() - started));

let stopping = false;
const stop = (exitCode: number): void => {
  if (stopping) return;
  stopping = true;
  console.log("\nstopping…");
  void aws.stop().then(() => {
    console.log("stopped");
    process.exit(exitCode);
  });
};
for (const signal of ["SIGINT", "SIGTERM"] as const) process.on(signal, () => stop(0));
void aws.crashed.then((what) => {
  console.error(`\n${what}`);
  stop(1);
});

function describe(aws: EmbeddedAws, storage: StorageNames, elapsedMs: number): string {
  const { endpoints } = aws;
  return [
    `Ebb embedded AWS is up (${(elapsedMs / 1000).toFixed(1)} s)`,
    `  S3          ${endpoints.s3Endpoint}`,
    `  DynamoDB    ${endpoints.dynamoDbEndpoint}`,
    `  bucket      ${storage.bucket}`,
    `  tables      Pipelines   ${storage.pipelinesTable}`,
    `              Updates     ${storage.updatesTable}`,
    `              Checkpoints ${storage.checkpointsTable}`,
    `              EventLog    ${storage.eventLogTable}`,
    `  data        ${aws.dataDir ?? "in memory: gone on stop"}`,
    "",
    "For the AWS CLI and SDKs in another shell:",
    `  export AWS_ENDPOINT_URL_S3=${endpoints.s3Endpoint} AWS_ENDPOINT_URL_DYNAMODB=${endpoints.dynamoDbEndpoint} \\`,
    `    AWS_REGION=${endpoints.region} AWS_ACCESS_KEY_ID=${endpoints.credentials.accessKeyId} AWS_SECRET_ACCESS_KEY=${endpoints.credentials.secretAccessKey}`,
    "",
    "Ctrl-C to stop.",
  ].join("\n");
}
