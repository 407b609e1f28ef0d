import { availableParallelism } from "node:os";
import { configDefaults, defineConfig, type ViteUserConfig } from "vitest/config";

// The SDK warns in every process that its Node 20 support ends in 2027; Lambda runs nodejs22.x, and the
// warning buries test output here. Set before the global setup and the workers (which inherit it) start.
process.env["AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED"] ??= "true";

/** Settings the main suite and the client-compatibility suite (vitest.clients.config.ts) share. */
export const sharedTestSettings: NonNullable<ViteUserConfig["test"]> = {
  globalSetup: ["test/global-setup.ts"],
  // A bound for a hang, not a speed check: under a heavy load (a CI run beside other work, load 18+)
  // a property test or a browser flow takes several times its quiet time, and per-test bounds fitted
  // to quiet times failed runs that were only slow. Tests set none of their own below this.
  testTimeout: 600_000,
  hookTimeout: 600_000,
  // expect.poll's own default (1 s) failed a browser test whose click started an update at load 18.
  expect: { poll: { timeout: 60_000 } },
  pool: "forks",
  // One file per core: most files spend much of their time waiting on the stand-ins, DuckDB's
  // threads or a child process, so a core per file stays busy. Vitest's default (one core less)
  // runs a single file at a time on a 2-core machine (612 s against 413 s for this suite there).
  maxWorkers: availableParallelism(),
};

/**
 * The unit tests share their worker's modules (`isolate: false`): a fresh process per file spent more
 * time importing than testing (test/unit/delta and pipeline, 57 files at load 20: 584 s isolated,
 * 354 s shared, imports 381 s against 80 s). They keep no module state between files; a file that
 * mocks a module (vi.mock is not undone for the next file) runs isolated.
 */
const UNIT = ["test/unit/**/*.test.ts"];
const MOCKS_A_MODULE = ["test/unit/delta/fifo-pool.test.ts"];
const { globalSetup, maxWorkers, ...perProject } = sharedTestSettings;

/** Each project's settings; the stand-ins' global setup stays at the root, so it runs once for both. */
const project = (name: string, test: { include: string[]; exclude: string[]; isolate?: boolean }) => ({
  test: {
    name,
    ...perProject,
    // Every Delta table a test writes in memory is checked against the protocol after the test.
    setupFiles: ["test/support/protocol-check-setup.ts"],
    ...test,
    exclude: [...configDefaults.exclude, ...test.exclude],
  },
});

export default defineConfig({
  test: {
    globalSetup,
    maxWorkers,
    projects: [
      project("unit", { include: UNIT, exclude: MOCKS_A_MODULE, isolate: false }),
      project("isolated", {
        include: ["test/!(unit)/**/*.test.ts", ...MOCKS_A_MODULE],
        // Suites with their own commands and installs: npm run test:clients, test:interop,
        // test:sdp-peer, test:package.
        exclude: ["test/clients/**", "test/interop/**", "test/sdp-peer/**", "test/package/**"],
      }),
    ],
  },
});
