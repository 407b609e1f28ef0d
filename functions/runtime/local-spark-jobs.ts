import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { readdirSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath, pathToFileURL } from "node:url";
import { z } from "zod";
import {
  sparkFailureSchema,
  type SparkBatchRequest,
} from "../../shared/engine/spark/spark-batch-contract.ts";
import type { SparkJobRun, SparkJobs } from "../../shared/engine/spark/spark-jobs.ts";
import { logger } from "./ebb-logger.ts";
import { ENVIRONMENT } from "./environment.ts";

/**
 * The Spark engine of the local runtime and the tests: the entry script EMR Serverless runs
 * (functions/spark/ebb_spark_batch.py), on real Spark in local mode, pinned as the EMR release is
 * (functions/spark/setup.sh).
 *
 * One long-lived driver per process, started on the first batch: pyspark launches the JVM through
 * `spark-submit` (PYSPARK_SUBMIT_ARGS: master `local[2]`, the pinned jars, the S3 stand-in as s3a),
 * and the script (`--serve`) takes one request per stdin line. A JVM start costs ~10 s on this
 * machine, more than most batches, and EMR Serverless hides its own start in a pre-initialised
 * application; a driver per batch would make every local Spark batch pay it. Batches run one at a
 * time, as the update's flows of one level do in this process. A driver that dies fails its batch
 * (SPARK_JOB_FAILED) and the next batch starts a new one.
 *
 * The driver runs under the local runtime's tether (infra/local/tether.ts `--stdin`, which passes the
 * requests on): the script reads its stdin only between batches, so were this process killed
 * (`kill -9`) it would compute its batch to the end; the tether stops it, its JVM with it, at once.
 */

export interface LocalSparkSettings {
  /** The virtual environment's python (EBB_SPARK_PYTHON). */
  readonly python: string;
  /** The folder of pinned jars (EBB_SPARK_JARS). */
  readonly jars: string;
  /** The pipelines' bucket. */
  readonly bucket: string;
  /** The S3 stand-in (AWS_ENDPOINT_URL_S3) and its keys. */
  readonly s3Endpoint?: string;
  readonly credentials?: { readonly accessKeyId: string; readonly secretAccessKey: string };
  /** The driver's heap (local mode: the executors run in it). @default "1g" */
  readonly driverMemory?: string;
}

const ENTRY_SCRIPT = fileURLToPath(new URL("../spark/ebb_spark_batch.py", import.meta.url));
const TETHER = fileURLToPath(new URL("../../infra/local/tether.ts", import.meta.url));

/** How much of a stray line on the driver's stdout the log keeps. */
const MAX_LOGGED_LINE = 200;

/** How long the driver may take to start (a cold JVM on a busy 2-core machine). */
const START_TIMEOUT_MS = 180_000;

const answerSchema = z.union([
  z.object({ ok: z.literal(true), ready: z.literal(true), applicationId: z.string() }),
  z.object({
    ok: z.literal(true),
    manifest: z.object({ sparkApplicationId: z.string().optional() }).passthrough(),
  }),
  z.object({ ok: z.literal(false), failure: sparkFailureSchema }),
]);
type Answer = z.infer<typeof answerSchema>;

interface Driver {
  readonly child: ChildProcessWithoutNullStreams;
  /** The driver's process group (the script and its JVM), under the tether. */
  readonly group: number;
  readonly applicationId: string;
  /** The next answer line, or undefined when the driver exited first. */
  next(): Promise<Answer | undefined>;
}

export class LocalSparkJobs implements SparkJobs {
  readonly #settings: LocalSparkSettings;
  #driver: Promise<Driver> | undefined;
  #queue: Promise<unknown> = Promise.resolve();

  constructor(settings: LocalSparkSettings) {
    this.#settings = settings;
  }

  bucketUri(key: string): string {
    return `s3a://${this.#settings.bucket}/${key}`;
  }

  locationUri(location: string, key: string): string {
    const root = location.replace(/\/+$/, "");
    const uri = root.startsWith("/") ? `file://${root}` : root.replace(/^s3a?:\/\//, "s3a://");
    return key === "" ? `${uri}/` : `${uri}/${key}`;
  }

  run(request: SparkBatchRequest): Promise<SparkJobRun> {
    const next = this.#queue.then(() => this.#run(request));
    this.#queue = next.catch(() => undefined);
    return next;
  }

  /** Kills the driver (the crash tests: a job that dies at a random point). */
  kill(): void {
    void this.#driver?.then(
      (driver) => killGroup(driver.group),
      () => undefined,
    );
    this.#driver = undefined;
  }

  async close(): Promise<void> {
    const driver = await this.#driver?.catch(() => undefined);
    this.#driver = undefined;
    if (!driver || driver.child.exitCode !== null) return;
    const exited = new Promise((resolve) => driver.child.once("exit", resolve));
    driver.child.stdin.end();
    driver.child.kill();
    await exited;
  }

  async #run(request: SparkBatchRequest): Promise<SparkJobRun> {
    let driver: Driver;
    try {
      driver = await (this.#driver ??= this.#start());
    } catch (error) {
      this.#driver = undefined;
      const message = error instanceof Error ? error.message : String(error);
      return {
        jobId: `local/${request.flow}-${request.txn.version}`,
        failure: { status: "failed", kind: "job", message },
      };
    }
    driver.child.stdin.write(JSON.stringify(request) + "\n");
    const answer = await driver.next();
    const jobId = `${driver.applicationId}/${request.flow}-${request.txn.version}`;
    if (answer === undefined) {
      this.#driver = undefined;
      return {
        jobId,
        failure: { status: "failed", kind: "job", message: "the Spark driver exited during the job" },
      };
    }
    if ("failure" in answer) return { jobId, failure: answer.failure };
    return { jobId };
  }

  async #start(): Promise<Driver> {
    const { python, jars, s3Endpoint, credentials } = this.#settings;
    const jarList = readdirSync(jars)
      .filter((name) => name.endsWith(".jar"))
      .map((name) => path.join(jars, name));
    const conf = (key: string, value: string) => ["--conf", `${key}=${value}`];
    const submitArgs = [
      "--master",
      "local[2]",
      "--driver-memory",
      this.#settings.driverMemory ?? "1g",
      "--jars",
      jarList.join(","),
      ...conf("spark.ui.enabled", "false"),
      ...conf("spark.ui.showConsoleProgress", "false"),
      ...conf("spark.sql.shuffle.partitions", "2"),
      // A driver of small jobs: the quick compiler alone, and one GC thread. The S3 stand-in's ETag of a
      // 0-byte directory marker is not its MD5, which the S3A connector's SDK (v1) checks on every put.
      ...conf(
        "spark.driver.extraJavaOptions",
        [
          "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC",
          ...(s3Endpoint ? ["-Dcom.amazonaws.services.s3.disablePutObjectMD5Validation=true"] : []),
        ].join(" "),
      ),
      // s3:// as EMR reads it (the state machine's requests name s3:// URIs), through the S3A connector.
      ...conf("spark.hadoop.fs.s3.impl", "org.apache.hadoop.fs.s3a.S3AFileSystem"),
      ...(s3Endpoint
        ? [
            ...conf("spark.hadoop.fs.s3a.endpoint", s3Endpoint),
            ...conf("spark.hadoop.fs.s3a.path.style.access", "true"),
            ...conf("spark.hadoop.fs.s3a.connection.ssl.enabled", String(s3Endpoint.startsWith("https:"))),
            ...conf("spark.hadoop.fs.s3a.change.detection.mode", "none"),
          ]
        : []),
      ...(credentials
        ? [
            ...conf("spark.hadoop.fs.s3a.access.key", credentials.accessKeyId),
            ...conf("spark.hadoop.fs.s3a.secret.key", credentials.secretAccessKey),
          ]
        : []),
      "pyspark-shell",
    ];
    const tsx = pathToFileURL(createRequire(import.meta.url).resolve("tsx")).href;
    const command = [TETHER, "--stdin", python, ENTRY_SCRIPT, "--serve"];
    const child = spawn(process.execPath, ["--import", tsx, ...command], {
      // pyspark splits PYSPARK_SUBMIT_ARGS as a shell would.
      env: {
        ...process.env,
        PYSPARK_SUBMIT_ARGS: submitArgs.map(shellQuoted).join(" "),
        PYSPARK_PYTHON: python,
      },
      stdio: ["pipe", "pipe", "pipe"],
    });
    // Spark's log is kept for a failure's message and otherwise dropped.
    let tail = "";
    child.stderr.on("data", (chunk: Buffer) => {
      tail = (tail + chunk.toString("utf8")).slice(-4000);
    });
    const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
    const exited = new Promise<undefined>((resolve) => child.once("exit", () => resolve(undefined)));
    const line = async (): Promise<string | undefined> => {
      const read = await Promise.race([lines.next(), exited]);
      return read === undefined || read.done ? undefined : read.value;
    };
    const next = async (): Promise<Answer | undefined> => {
      for (;;) {
        const text = await line();
        if (text === undefined) return undefined;
        const answer = parsedAnswer(text);
        if (answer !== undefined) return answer;
        // A print that reached the driver's stdout (not an answer): the answer itself still follows.
        logger.warn("the local Spark driver wrote a line that is not an answer; skipped", {
          line: text.slice(0, MAX_LOGGED_LINE),
        });
      }
    };
    const timer = new Promise<"timeout">((resolve) =>
      setTimeout(() => resolve("timeout"), START_TIMEOUT_MS).unref(),
    );
    // The tether's first line names the driver's process group.
    const tethered = await Promise.race([line(), timer]);
    const pid = tethered === "timeout" ? undefined : tetheredPid(tethered);
    const ready = pid === undefined ? undefined : await Promise.race([next(), timer]);
    if (pid === undefined || ready === undefined || ready === "timeout" || !("ready" in ready)) {
      if (pid !== undefined) killGroup(pid);
      child.kill("SIGKILL");
      this.#driver = undefined;
      throw new Error(`the local Spark driver did not start: ${tail.split("\n").slice(-5).join(" ")}`);
    }
    process.once("exit", () => killGroup(pid));
    return { child, group: pid, applicationId: ready.applicationId, next };
  }
}

/** The driver's answer on `line`, or undefined for any other line. */
function parsedAnswer(line: string): Answer | undefined {
  try {
    const parsed = answerSchema.safeParse(JSON.parse(line));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}

const tetheredPidSchema = z.object({ tetheredPid: z.number().int().positive() });

/** The driver's group as the tether's first line names it, or undefined for any other line. */
function tetheredPid(line: string | undefined): number | undefined {
  try {
    return tetheredPidSchema.parse(JSON.parse(line ?? "")).tetheredPid;
  } catch {
    return undefined;
  }
}

function killGroup(pid: number): void {
  try {
    process.kill(-pid, "SIGKILL");
  } catch {
    // Already gone.
  }
}

function shellQuoted(arg: string): string {
  return /^[\w@%+=:,./-]+$/.test(arg) ? arg : `'${arg.replaceAll("'", `'"'"'`)}'`;
}

const processDrivers = new Map<string, LocalSparkJobs>();

/**
 * The process's driver for `settings`, made on first ask: one JVM per process however many control
 * planes (a local runtime restarted in process, test files sharing a worker) ask for the same Spark.
 */
export function sharedLocalSparkJobs(settings: LocalSparkSettings): LocalSparkJobs {
  const { python, jars, bucket, s3Endpoint, credentials, driverMemory } = settings;
  const key = JSON.stringify([
    python,
    jars,
    bucket,
    s3Endpoint,
    credentials?.accessKeyId,
    credentials?.secretAccessKey,
    driverMemory,
  ]);
  let driver = processDrivers.get(key);
  if (driver === undefined) processDrivers.set(key, (driver = new LocalSparkJobs(settings)));
  return driver;
}

/** The local Spark engine the environment configures (EBB_SPARK_PYTHON, EBB_SPARK_JARS), if any. */
export function localSparkFromEnv(env: NodeJS.ProcessEnv, bucket: () => string): LocalSparkJobs | undefined {
  const python = env[ENVIRONMENT.sparkPython];
  const jars = env[ENVIRONMENT.sparkJars];
  if (!python || !jars) return undefined;
  const accessKeyId = env["AWS_ACCESS_KEY_ID"];
  const secretAccessKey = env["AWS_SECRET_ACCESS_KEY"];
  const s3Endpoint = env["AWS_ENDPOINT_URL_S3"];
  return sharedLocalSparkJobs({
    python,
    jars,
    bucket: bucket(),
    ...(s3Endpoint ? { s3Endpoint } : {}),
    ...(accessKeyId && secretAccessKey ? { credentials: { accessKeyId, secretAccessKey } } : {}),
  });
}
