import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { createInterface } from "node:readline";
import { fileURLToPath, pathToFileURL } from "node:url";
import { StandInStartError } from "./errors.ts";

/** How long `stop()` waits for a graceful exit before SIGKILL. */
const STOP_GRACE_MS = 5_000;
/** Lines of output kept for error messages. */
const RECENT_LINES = 40;

/** A stand-in ready to serve: where it listens and how to stop it. */
export interface RunningStandIn {
  readonly endpoint: string;
  /** Every process it runs, for checking that none is left behind. */
  readonly pids: readonly number[];
  /** Resolves with what happened if it exits without `stop()` having been called; never otherwise. */
  readonly crashed: Promise<string>;
  stop(): Promise<void>;
}

/** A child process running a stand-in, tied to this process (see parent-watchdog.ts). */
export interface StandInProcess {
  readonly name: string;
  /** The child's pid, then those of processes it runs for us (the JVM under the tether). */
  readonly pids: readonly number[];
  /** Records a process the child runs for us, so `stop()` and the orphan checks cover it too. */
  track(pid: number): void;
  /** Resolves when the child has exited. */
  readonly exited: Promise<void>;
  /** Resolves with its last output if it exits without `stop()` having been called; never otherwise. */
  readonly crashed: Promise<string>;
  hasExited(): boolean;
  /** The last lines it printed (stdout and stderr), for error messages. */
  recentOutput(): string;
  /** The first stdout line matching `pattern`; rejects if the child exits or `timeoutMs` passes first. */
  waitForLine(pattern: RegExp, timeoutMs: number): Promise<RegExpMatchArray>;
  /** Closes the child's stdin (its signal to shut down) and waits for it to exit; SIGKILL after a grace period. */
  stop(): Promise<void>;
}

/**
 * Spawns a stand-in. Its stdin is a pipe we never write to: the child's watchdog exits when it closes,
 * which happens on `stop()` and when this process dies. It runs in its own process group, so a Ctrl-C
 * in the terminal reaches only us and we stop the stand-ins in order.
 */
export function spawnStandIn(
  name: string,
  command: string,
  args: readonly string[],
  /** Added to this process's environment (secrets go here: other users can read a command line). */
  env: Readonly<Record<string, string>> = {},
): StandInProcess {
  const child = spawn(command, args, {
    stdio: ["pipe", "pipe", "pipe"],
    detached: true,
    env: { ...process.env, ...env },
  });
  // Closing stdin is how we stop it; a child that already died must not turn that into a crash here.
  child.stdin.on("error", () => undefined);
  const pids: number[] = child.pid === undefined ? [] : [child.pid];
  const recent: string[] = [];
  const watchers = new Set<(line: string) => void>();
  let done = false;
  let stopping = false;
  const exited = new Promise<void>((resolve) => {
    child.once("error", (error) => {
      recent.push(`${command}: ${error.message}`);
      done = true;
      resolve();
    });
    child.once("exit", () => {
      done = true;
      resolve();
    });
  });

  const remember = (line: string): void => {
    recent.push(line);
    if (recent.length > RECENT_LINES) recent.shift();
  };
  createInterface({ input: child.stdout }).on("line", (line) => {
    remember(line);
    for (const watch of watchers) watch(line);
  });
  createInterface({ input: child.stderr }).on("line", remember);

  const handle: StandInProcess = {
    name,
    pids,
    track: (pid) => pids.push(pid),
    exited,
    crashed: exited.then(() =>
      stopping ? new Promise<string>(() => undefined) : `${name} exited unexpectedly:\n${recent.join("\n")}`,
    ),
    hasExited: () => done,
    recentOutput: () => recent.join("\n"),
    waitForLine(pattern, timeoutMs) {
      return new Promise((resolve, reject) => {
        const finish = (error?: Error, match?: RegExpMatchArray): void => {
          clearTimeout(timer);
          watchers.delete(watch);
          if (match) resolve(match);
          else reject(error);
        };
        const watch = (line: string): void => {
          const match = pattern.exec(line);
          if (match) finish(undefined, match);
        };
        const timer = setTimeout(
          () => finish(startError(handle, `printed no line matching ${pattern} within ${timeoutMs} ms`)),
          timeoutMs,
        );
        watchers.add(watch);
        void exited.then(() => finish(startError(handle, "exited while starting")));
      });
    },
    async stop() {
      stopping = true;
      if (done) return;
      child.stdin.end();
      const killer = setTimeout(() => {
        for (const pid of pids) killQuietly(pid);
      }, STOP_GRACE_MS);
      await exited;
      clearTimeout(killer);
    },
  };
  return handle;
}

/**
 * Runs `command` under the tether (tether.ts), for a program that cannot watch its own stdin. Resolves
 * once the tether has reported the command's pid.
 */
export async function spawnTethered(
  name: string,
  command: string,
  args: readonly string[],
  /** Added to the environment, as in spawnStandIn. */
  env: Readonly<Record<string, string>> = {},
): Promise<StandInProcess> {
  const tether = fileURLToPath(new URL("./tether.ts", import.meta.url));
  const standIn = spawnStandIn(name, ...nodeScript(tether, [command, ...args]), env);
  // The tether is a TypeScript script: tsx's start alone can take tens of seconds under a heavy load.
  const [, pid] = await standIn.waitForLine(/^\{"tetheredPid":(\d+)\}$/, 60_000);
  standIn.track(Number(pid));
  return standIn;
}

/** `node` running a TypeScript file through tsx, with extra node flags before it. */
export function nodeScript(
  script: string,
  args: readonly string[],
  nodeFlags: readonly string[] = [],
): [string, string[]] {
  // Resolved from here rather than the cwd, so it works wherever `npm start` or vitest is run from.
  const tsx = pathToFileURL(createRequire(import.meta.url).resolve("tsx")).href;
  return [process.execPath, [...nodeFlags, "--import", tsx, script, ...args]];
}

/**
 * Whether a process with this pid is alive: signal 0 checks without sending anything. On Linux a zombie
 * (exited, not yet reaped by an init that may never reap it) counts as gone.
 */
export function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
  try {
    // The state letter follows the parenthesised command name: "1234 (java) Z …".
    return !/\) Z /.test(readFileSync(`/proc/${pid}/stat`, "utf8"));
  } catch {
    return true;
  }
}

function killQuietly(pid: number): void {
  try {
    process.kill(pid, "SIGKILL");
  } catch {
    // Already gone.
  }
}

function startError(handle: StandInProcess, what: string): StandInStartError {
  const output = handle.recentOutput();
  return new StandInStartError(`${handle.name} ${what}${output ? `; its last output:\n${output}` : ""}`);
}
