import { defineConfig } from "vitest/config";

process.env["AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED"] ??= "true";

/**
 * Files that share their worker's Spark: a worker runs several of them (`isolate: false`), and the
 * JVM the first starts (~25 s cold on the loaded machine) serves the next. Readers take
 * `SparkDriver.shared`; the engine's files the process's `sharedLocalSparkJobs` (directly, or through
 * the local control plane's functions). Each group has its own workers, so one worker holds one JVM.
 */
const SPARK_READERS = ["spark.test.ts", "spark-dedup.test.ts", "spark-dialect.test.ts"];
const SPARK_ENGINE = [
  "spark-auto-typed.test.ts",
  "spark-cdc.test.ts",
  "spark-cdc-edges.test.ts",
  "spark-change-feed.test.ts",
  "spark-crash.test.ts",
  "spark-engine.test.ts",
  "spark-incremental-views.test.ts",
  "spark-kafka.test.ts",
  "spark-replay.test.ts",
  "spark-stateful.test.ts",
  "spark-views.test.ts",
];
const within = (files: readonly string[]) => files.map((file) => `test/interop/${file}`);

/** Each group's settings; the stand-ins' global setup stays at the root, so it runs once for all three. */
const group = (
  name: string,
  include: string[],
  settings: { isolate?: boolean; exclude?: string[] } = {},
) => ({
  // A bound for a hang (vitest.config.ts says why so long); Spark batches under a heavy load take minutes.
  test: { name, include, testTimeout: 1_200_000, hookTimeout: 600_000, pool: "forks" as const, ...settings },
});

/** The interop suite (`npm run test:interop`): needs the Python engines `run.sh` installs. */
export default defineConfig({
  test: {
    globalSetup: ["test/global-setup.ts"],
    // Two files at once: each Spark test waits on its JVM, its stand-ins and its updates much of the
    // time; one at a time the suite took as long as all its Spark starts added up.
    maxWorkers: 2,
    projects: [
      group("spark readers", within(SPARK_READERS), { isolate: false }),
      group("spark engine", within(SPARK_ENGINE), { isolate: false }),
      // Their own Spark: under a capped /tmp (auto-engine), behind the EMR Serverless state (state-machine).
      group("own process", ["test/interop/**/*.test.ts"], {
        exclude: within([...SPARK_READERS, ...SPARK_ENGINE]),
      }),
    ],
  },
});
