import { defineConfig } from "vitest/config";

process.env["AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED"] ??= "true";

/** The interop suite (`npm run test:interop`): needs the Python engines `run.sh` installs. */
export default defineConfig({
  test: {
    include: ["test/interop/**/*.test.ts"],
    globalSetup: ["test/global-setup.ts"],
    testTimeout: 300_000,
    hookTimeout: 120_000,
    pool: "forks",
    // Two files at once: each Spark test waits on its JVM, its stand-ins and its updates much of the
    // time; one at a time the suite took as long as all its Spark starts added up.
    maxWorkers: 2,
  },
});
