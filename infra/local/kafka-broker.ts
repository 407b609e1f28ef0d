import { existsSync } from "node:fs";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { Admin } from "@platformatic/kafka";
import { StandInStartError } from "./errors.ts";
import { findJava } from "./java-runtime.ts";
import { kafkaLibs } from "./kafka-artifacts.ts";
import { freeLoopbackPort, LOOPBACK } from "./loopback-port.ts";
import { spawnTethered, type RunningStandIn, type StandInProcess } from "./stand-in-process.ts";

/**
 * Apache Kafka itself, one node in KRaft mode (broker and controller in one JVM) on loopback, run from
 * its Maven jars under the tether, so it never outlives the process that started it. Only the tests
 * (and benchmarks) that read Kafka start one.
 *
 * 1. Fetch the jars once (`kafka-artifacts.ts`).
 * 2. Write `server.properties` and format the log folder (`StorageTool format`), unless a folder given
 *    by the caller is formatted already (a restart keeps its topics and offsets).
 * 3. Start `kafka.Kafka` and poll the broker with a metadata request until it answers.
 */

/** A cold JVM on a busy 2-core machine: format ~3 s, start ~5 s. */
const READY_TIMEOUT_MS = 60_000;
const BIND_ATTEMPTS = 3;
/** Any 16 bytes, base64url: one cluster for every broker started here. */
const CLUSTER_ID = "q1Sh-9_ISia_zwGINzRvyQ";

export interface KafkaBrokerOptions {
  /** The broker's log folder; kept on stop, and reused (not formatted again) by a later start. @default a temporary folder, removed on stop */
  readonly dataDir?: string;
  /** The client port; a restart passes the one it had, so clients reconnect. @default a free port */
  readonly port?: number;
}

export interface RunningKafkaBroker extends RunningStandIn {
  /** `127.0.0.1:<port>`, for `bootstrap_servers`. */
  readonly bootstrap: string;
  readonly port: number;
  readonly dataDir: string;
}

export async function startKafkaBroker(options: KafkaBrokerOptions = {}): Promise<RunningKafkaBroker> {
  const [java, libs] = await Promise.all([findJava(), kafkaLibs()]);
  const temporary = options.dataDir === undefined;
  const dataDir = options.dataDir ?? (await mkdtemp(path.join(os.tmpdir(), "ebb-kafka-")));
  const classPath = path.join(libs, "*");
  try {
    for (let attempt = 1; ; attempt++) {
      const port = options.port ?? (await freeLoopbackPort());
      // The kernel may hand back the port just freed: the two listeners need two ports.
      let controllerPort = await freeLoopbackPort();
      while (controllerPort === port) controllerPort = await freeLoopbackPort();
      const config = await writeConfig(dataDir, port, controllerPort);
      const logs = path.join(dataDir, "logs");
      if (!existsSync(path.join(logs, "meta.properties"))) {
        const format = await spawnTethered("Kafka storage format", java.command, [
          ...jvmFlags(dataDir),
          "-cp",
          classPath,
          "kafka.tools.StorageTool",
          "format",
          "--ignore-formatted",
          "-t",
          CLUSTER_ID,
          "-c",
          config,
        ]);
        await format.exited;
        if (!existsSync(path.join(logs, "meta.properties")))
          throw new StandInStartError(`Kafka could not format ${logs}:\n${format.recentOutput()}`);
      }
      const jvm = await spawnTethered("Kafka broker", java.command, [
        ...jvmFlags(dataDir),
        "-cp",
        classPath,
        "kafka.Kafka",
        config,
      ]);
      const bootstrap = `${LOOPBACK}:${port}`;
      try {
        await waitUntilServing(bootstrap, jvm);
      } catch (error) {
        await jvm.stop();
        const portTaken = /BindException|Address already in use/.test(jvm.recentOutput());
        if (!portTaken || attempt >= BIND_ATTEMPTS || options.port !== undefined) throw error;
        continue;
      }
      return {
        endpoint: bootstrap,
        bootstrap,
        port,
        dataDir,
        pids: jvm.pids,
        crashed: jvm.crashed,
        stop: async () => {
          await jvm.stop();
          if (temporary) await rm(dataDir, { recursive: true, force: true });
        },
      };
    }
  } catch (error) {
    if (temporary) await rm(dataDir, { recursive: true, force: true });
    throw error;
  }
}

/** Small and quick rather than fast at peak; log4j prints warnings and errors only. */
function jvmFlags(dataDir: string): string[] {
  return [
    "-Xms128m",
    "-Xmx512m",
    "-XX:TieredStopAtLevel=1",
    "-XX:+UseSerialGC",
    `-Dlog4j2.configurationFile=${path.join(dataDir, "log4j2.properties")}`,
  ];
}

async function writeConfig(dataDir: string, port: number, controllerPort: number): Promise<string> {
  await mkdir(dataDir, { recursive: true });
  const settings: Record<string, string | number> = {
    "process.roles": "broker,controller",
    "node.id": 1,
    "controller.quorum.voters": `1@${LOOPBACK}:${controllerPort}`,
    listeners: `PLAINTEXT://${LOOPBACK}:${port},CONTROLLER://${LOOPBACK}:${controllerPort}`,
    "advertised.listeners": `PLAINTEXT://${LOOPBACK}:${port}`,
    "controller.listener.names": "CONTROLLER",
    "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT",
    "inter.broker.listener.name": "PLAINTEXT",
    "log.dirs": path.join(dataDir, "logs"),
    "auto.create.topics.enable": "false",
    "num.partitions": 1,
    "offsets.topic.replication.factor": 1,
    "offsets.topic.num.partitions": 1,
    "transaction.state.log.replication.factor": 1,
    "transaction.state.log.min.isr": 1,
    "share.coordinator.state.topic.replication.factor": 1,
    "group.initial.rebalance.delay.ms": 0,
    // Retention is enforced within a second, so a test can watch a short-retention topic expire.
    "log.initial.task.delay.ms": 0,
    "log.retention.check.interval.ms": 500,
    "log.segment.delete.delay.ms": 0,
  };
  const config = path.join(dataDir, "server.properties");
  await writeFile(
    config,
    Object.entries(settings)
      .map(([key, value]) => `${key}=${value}`)
      .join("\n") + "\n",
  );
  await writeFile(
    path.join(dataDir, "log4j2.properties"),
    [
      "appender.out.type=Console",
      "appender.out.name=out",
      "appender.out.target=SYSTEM_ERR",
      "appender.out.layout.type=PatternLayout",
      "appender.out.layout.pattern=%p %c{1}: %m%n",
      "rootLogger.level=WARN",
      "rootLogger.appenderRef.out.ref=out",
    ].join("\n") + "\n",
  );
  return config;
}

/** Polls with a metadata request until the broker answers; fails early if the JVM exits. */
async function waitUntilServing(bootstrap: string, jvm: StandInProcess): Promise<void> {
  const deadline = Date.now() + READY_TIMEOUT_MS;
  for (;;) {
    const admin = new Admin({
      clientId: "ebb-kafka-ready",
      bootstrapBrokers: [bootstrap],
      retries: 0,
      connectTimeout: 1_000,
      requestTimeout: 5_000,
    });
    try {
      await admin.listTopics();
      return;
    } catch (error) {
      if (jvm.hasExited())
        throw new StandInStartError(`Kafka exited while starting; its output:\n${jvm.recentOutput()}`, {
          cause: error,
        });
      if (Date.now() > deadline)
        throw new StandInStartError(
          `Kafka did not answer at ${bootstrap} within ${READY_TIMEOUT_MS} ms; its output:\n${jvm.recentOutput()}`,
          { cause: error },
        );
      await sleep(250);
    } finally {
      await admin.close().catch(() => undefined);
    }
  }
}
