import { defineConfig } from "vitest/config";

/**
 * The installable-package suite (`npm run test:package`): packs Ebb and installs it into a fresh CDK
 * app. Its own command, as it builds the whole package (minutes); it needs no AWS stand-ins.
 */
export default defineConfig({
  // A bound for a hang only: the CI runs this suite beside the interop suite's Spark jobs, where the
  // pack, install, tsc and synthesis (80 s on a quiet machine) took 1,211 s and overran 900 s.
  test: { include: ["test/package/**/*.test.ts"], testTimeout: 3_600_000, hookTimeout: 600_000 },
});
