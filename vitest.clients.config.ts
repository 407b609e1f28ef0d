import { defineConfig } from "vitest/config";
import { sharedTestSettings } from "./vitest.config.ts";

/**
 * The client-compatibility suite (`npm run test:clients`): the real Databricks clients, installed by
 * test/clients/setup.sh, against the local runtime.
 */
export default defineConfig({ test: { ...sharedTestSettings, include: ["test/clients/**/*.test.ts"] } });
