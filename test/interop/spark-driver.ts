import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { rmSync } from "node:fs";
import { mkdtemp, readdir } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { createInterface, type Interface } from "node:readline";

/**
 * The suite's one Spark: `spark_driver.py` in a child process (one JVM per worker, `shared`), asked one
 * JSON request per line. Requests are answered in order; the driver's stderr (Spark's log) is kept
 * for the error message when the driver dies.
 */
export class SparkDriver {
  readonly #child: ChildProcessWithoutNullStreams;
  readonly #lines: Interface;
  readonly #waiting: { resolve(value: unknown): void; reject(error: Error): void }[] = [];
  #log = "";
  #exited: Error | undefined;

  private constructor(child: ChildProcessWithoutNullStreams) {
    this.#child = child;
    this.#lines = createInterface({ input: child.stdout });
    this.#lines.on("line", (line) => {
      const reply = JSON.parse(line) as { ok: boolean; result?: unknown; error?: string };
      const next = this.#waiting.shift();
      if (reply.ok) next?.resolve(reply.result);
      else next?.reject(new Error(`Spark: ${reply.error}`));
    });
    child.stderr.on("data", (chunk: Buffer) => {
      this.#log = (this.#log + chunk.toString()).slice(-20_000);
    });
    child.on("exit", (code, signal) => {
      this.#exited = new Error(`the Spark driver exited (${signal ?? code}); its log ends:\n${this.#log}`);
      for (const waiting of this.#waiting.splice(0)) waiting.reject(this.#exited);
    });
  }

  /** Starts Spark with the Delta jars in `jarsFolder`; resolves once the session is up. */
  static async start(python: string, jarsFolder: string, warehouse: string): Promise<SparkDriver> {
    const jars = (await readdir(jarsFolder)).filter((name) => name.endsWith(".jar"));
    if (jars.length === 0) throw new Error(`no Delta jars in ${jarsFolder}: run npm run test:interop`);
    const child = spawn(
      python,
      [path.join(import.meta.dirname, "spark_driver.py"), ...jars.map((jar) => path.join(jarsFolder, jar))],
      { env: { ...process.env, EBB_SPARK_WAREHOUSE: warehouse, PYSPARK_PYTHON: python } },
    );
    const driver = new SparkDriver(child);
    const ready = await driver.#next<{ spark: string }>();
    console.log(`interop Spark ${ready.spark} started`);
    return driver;
  }

  static #shared: Promise<SparkDriver> | undefined;

  /**
   * The worker's one driver, started on first ask and left running for the next file the worker
   * runs (the interop config runs the reader files in shared workers): a JVM start costs more than
   * most files' reads. Its warehouse is a folder of its own; it ends with the worker.
   */
  static shared(python: string, jarsFolder: string): Promise<SparkDriver> {
    SparkDriver.#shared ??= mkdtemp(path.join(tmpdir(), "ebb-interop-warehouse-")).then(async (warehouse) => {
      const driver = await SparkDriver.start(python, jarsFolder, warehouse);
      process.once("exit", () => {
        driver.#child.kill("SIGKILL");
        rmSync(warehouse, { recursive: true, force: true });
      });
      return driver;
    });
    SparkDriver.#shared.catch(() => (SparkDriver.#shared = undefined));
    return SparkDriver.#shared;
  }

  /** Sends one request and waits for its answer. */
  async request<T>(request: Record<string, unknown>): Promise<T> {
    if (this.#exited) throw this.#exited;
    const answer = this.#next<T>();
    this.#child.stdin.write(`${JSON.stringify(request)}\n`);
    return answer;
  }

  async close(): Promise<void> {
    if (this.#exited) return;
    const exited = new Promise((resolve) => this.#child.once("exit", resolve));
    this.#child.stdin.end();
    await exited;
  }

  #next<T>(): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.#waiting.push({ resolve: resolve as (value: unknown) => void, reject });
    });
  }
}
