import { spawn } from "node:child_process";
import { once } from "node:events";
import { exitWhenParentGone } from "./parent-watchdog.ts";

/**
 * `node tether.ts <command> [args…]`: runs a command that cannot watch for its parent's death itself
 * (the DynamoDB Local JVM) and stops it when our parent goes away. The first line on stdout is
 * `{"tetheredPid":<pid>}`, so the parent can check that no process is left behind; the command's own
 * output follows on the same stdout and stderr.
 */

/** How long the command gets to exit after SIGTERM before it is killed. */
const STOP_GRACE_MS = 3_000;

const [command, ...args] = process.argv.slice(2);
if (!command) {
  console.error("usage: tether.ts <command> [args…]");
  process.exit(2);
}

const child = spawn(command, args, { stdio: ["ignore", "inherit", "inherit"] });
child.on("error", (error) => {
  console.error(`tether: could not run ${command}: ${error.message}`);
  process.exit(127);
});
const exited = once(child, "exit");
child.on("exit", (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
process.stdout.write(`${JSON.stringify({ tetheredPid: child.pid })}\n`);

exitWhenParentGone(async () => {
  child.kill("SIGTERM");
  const killer = setTimeout(() => child.kill("SIGKILL"), STOP_GRACE_MS);
  await exited;
  clearTimeout(killer);
});
