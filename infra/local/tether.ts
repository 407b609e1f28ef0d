import { spawn } from "node:child_process";
import { once } from "node:events";
import { exitWhenParentGone } from "./parent-watchdog.ts";

/**
 * `node tether.ts [--stdin] <command> [args…]`: runs a command that cannot watch for its parent's
 * death itself (the DynamoDB Local JVM; the local Spark driver, deaf to its stdin while a batch runs)
 * and stops it, and every process it started, when our parent goes away. The command runs in its own
 * process group, which is what gets stopped. With `--stdin` our stdin is passed on to the command (the
 * Spark driver's requests); its end still means the parent is gone. The first line on stdout is
 * `{"tetheredPid":<pid>}` (also the group's id), so the parent can check that no process is left
 * behind; the command's own output follows on stdout and stderr. Its stdout passes through us rather
 * than being shared, so that line is first: the command, started in a session of its own, may run
 * before us (the kernel's autogroups schedule each session apart) and would otherwise write first.
 */

/** How long the command gets to exit after SIGTERM before it is killed. */
const STOP_GRACE_MS = 3_000;

const passStdin = process.argv[2] === "--stdin";
const [command, ...args] = process.argv.slice(passStdin ? 3 : 2);
if (!command) {
  console.error("usage: tether.ts [--stdin] <command> [args…]");
  process.exit(2);
}

const child = spawn(command, args, {
  stdio: [passStdin ? "pipe" : "ignore", "pipe", "inherit"],
  detached: true,
});
child.on("error", (error) => {
  console.error(`tether: could not run ${command}: ${error.message}`);
  process.exit(127);
});
if (passStdin && child.stdin) {
  child.stdin.on("error", () => undefined);
  process.stdin.pipe(child.stdin);
}

/** Signals the command's process group: the command and what it started (the Spark driver's JVM). */
function signalGroup(signal: NodeJS.Signals): void {
  try {
    if (child.pid !== undefined) process.kill(-child.pid, signal);
  } catch {
    // The group is gone.
  }
}

const exited = once(child, "exit");
// Whatever the command left running in its group would outlive us.
child.on("exit", () => signalGroup("SIGKILL"));
// Once its output is passed on in full.
child.on("close", (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
process.stdout.write(`${JSON.stringify({ tetheredPid: child.pid })}\n`);
child.stdout?.pipe(process.stdout);

exitWhenParentGone(async () => {
  signalGroup("SIGTERM");
  const killer = setTimeout(() => signalGroup("SIGKILL"), STOP_GRACE_MS);
  await exited;
  clearTimeout(killer);
});
