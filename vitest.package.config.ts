import { defineConfig } from "vitest/config";

/**
 * The installable-package suite (`npm run test:package`): packs Ebb and installs it into a fresh CDK
 * app. Its own command, as it builds the whole package (minutes); it needs no AWS stand-ins.
 */
export default defineConfig({
  test: { include: ["test/package/**/*.test.ts"], testTimeout: 900_000, hookTimeout: 60_000 },
});
