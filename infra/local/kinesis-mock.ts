import { fileURLToPath } from "node:url";
import { LOOPBACK } from "./loopback-port.ts";
import { nodeScript, spawnStandIn, type RunningStandIn } from "./stand-in-process.ts";

/** A cold start of the Scala.js bundle on a busy 2-core machine takes a few seconds. */
const READY_TIMEOUT_MS = 60_000;

/**
 * Starts the Kinesis stand-in (kinesis-mock-main.ts) as a child process tied to this one, and waits
 * until it listens. Only the tests and benchmarks that read Kinesis start one. It accepts any SigV4
 * signature; streams live in its memory and go with it.
 */
export async function startKinesisMock(): Promise<RunningStandIn> {
  const script = fileURLToPath(new URL("./kinesis-mock-main.ts", import.meta.url));
  const mock = spawnStandIn("Kinesis stand-in", ...nodeScript(script, []));
  try {
    const [, port] = await mock.waitForLine(/^\{"listening":(\d+)\}$/, READY_TIMEOUT_MS);
    return {
      endpoint: `http://${LOOPBACK}:${port}`,
      pids: mock.pids,
      crashed: mock.crashed,
      stop: () => mock.stop(),
    };
  } catch (error) {
    await mock.stop();
    throw error;
  }
}
