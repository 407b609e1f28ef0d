import { configDefaults, defineConfig } from "vitest/config";

// The SDK warns in every process that its Node 20 support ends in 2027; Lambda runs nodejs22.x, and the
// warning buries test output here. Set before the global setup and the workers (which inherit it) start.
process.env["AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED"] ??= "true";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // The interop suite needs Python engines: `npm run test:interop` runs it.
    exclude: [...configDefaults.exclude, "test/interop/**"],
    globalSetup: ["test/global-setup.ts"],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    pool: "forks",
  },
});
