import { defineConfig } from "vitest/config";
import { sharedTestSettings } from "./vitest.config.ts";

/**
 * The client-compatibility suite (`npm run test:clients`): the real Databricks clients, installed by
 * test/clients/setup.sh, against the local runtime. One file at a time: each claims the seed's table
 * names and releases them when it ends.
 */
export default defineConfig({
  test: { ...sharedTestSettings, include: ["test/clients/**/*.test.ts"], fileParallelism: false },
});
