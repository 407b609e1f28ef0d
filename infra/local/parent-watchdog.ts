/**
 * Ends this process when its parent goes away. The parent holds the write end of our stdin pipe and
 * never writes to it; the kernel closes that end when the parent exits for any reason, SIGKILL
 * included, so end-of-file on stdin tells us the parent is gone, on every OS and without polling.
 * The parent's orderly `stop()` closes the pipe too, so there is one shutdown path, always exercised.
 */
export function exitWhenParentGone(shutdown: () => Promise<void> | void): void {
  let started = false;
  const run = async (): Promise<void> => {
    if (started) return;
    started = true;
    try {
      await shutdown();
    } finally {
      process.exit(0);
    }
  };
  process.stdin.on("end", run);
  process.stdin.on("close", run);
  process.stdin.on("error", run);
  process.stdin.resume();
  // Stand-ins run in their own process group, so these come only from someone aiming at us.
  for (const signal of ["SIGTERM", "SIGINT", "SIGHUP"] as const) process.on(signal, run);
}
