import { spawnSync } from "node:child_process";
import { readdir } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

/**
 * `npm run bench`: runs every `bench/*.bench.ts` in name order, or only those whose name contains
 * one of the arguments (`npm run bench -- delta`). A bench file exports `run(): Promise<void>` and
 * prints its own figures. Each file runs in a process of its own: the local runtime's functions keep
 * one control plane per process (as a Lambda does), so a second runtime in one process would reach
 * the first one's stopped stand-ins.
 */
// Lambda runs nodejs22.x; the SDK's Node 20 end-of-support warning would only interleave with the figures.
process.env["AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED"] ??= "true";

const here = path.dirname(fileURLToPath(import.meta.url));
const ONE_FILE = "--one-file";

if (process.argv[2] === ONE_FILE) {
  const name = process.argv[3] ?? "";
  const module = (await import(pathToFileURL(path.join(here, name)).href)) as { run?: () => Promise<void> };
  if (typeof module.run !== "function") throw new Error(`${name} does not export run()`);
  // A run() whose pending work nothing keeps alive (an unref'd timer, a native call that never calls
  // back) ends the process mid-run, with no error of its own: say so instead of ending quietly.
  let finished = false;
  process.on("exit", (code) => {
    if (finished) return;
    console.error(`${name}: the process ended (exit code ${code}) before its run() finished`);
    process.exitCode = code === 0 ? 1 : code;
  });
  await module.run();
  finished = true;
} else {
  const filters = process.argv.slice(2);
  const files = (await readdir(here))
    .filter((name) => name.endsWith(".bench.ts"))
    .filter((name) => filters.length === 0 || filters.some((filter) => name.includes(filter)))
    .sort();
  let failed = 0;
  for (const name of files) {
    console.log(`\n## ${name}`);
    const child = spawnSync(
      process.execPath,
      [...process.execArgv, fileURLToPath(import.meta.url), ONE_FILE, name],
      {
        stdio: "inherit",
      },
    );
    if (child.status !== 0) {
      failed += 1;
      // A child killed by a signal (the kernel's out-of-memory killer, a timeout) prints nothing itself.
      const how = child.signal ? `was killed by ${child.signal}` : `exited with code ${String(child.status)}`;
      console.error(`${name} ${how}${child.error ? ` (${child.error.message})` : ""}`);
    }
  }
  if (failed > 0) {
    console.error(`\n${failed} of ${files.length} benchmarks failed`);
    process.exitCode = 1;
  }
}
