import { LocalSparkJobs } from "../../functions/runtime/local-spark-jobs.ts";

/**
 * `node spark-driver-owner.ts <python> <jars>`: starts a local Spark driver (`python` stands in for the
 * engine's venv) and hands it one batch, then waits; the tether test kills this process mid-batch.
 */
const [python, jars] = process.argv.slice(2);
const spark = new LocalSparkJobs({ python: python!, jars: jars!, bucket: "bucket" });
// The batch never ends here; were it to (a driver that did not start), the test shows why.
void spark
  .run({
    flow: "ingest",
    dataset: "raw",
    sql: "SELECT * FROM source",
    txn: { appId: "p/ingest", version: 1 },
    input: { kind: "files", format: "json", schema: null, uris: [] },
    output: { tableUri: "s3a://bucket/t", stagingPath: "spark/1-a", partitionColumns: [] },
    manifestUri: "s3a://bucket/m.json",
  })
  .then((run) => console.error(`spark-driver-owner: the batch ended: ${JSON.stringify(run)}`));
setInterval(() => undefined, 60_000);
