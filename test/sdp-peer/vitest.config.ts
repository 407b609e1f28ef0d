import { defineConfig } from "vitest/config";

process.env["AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED"] ??= "true";

/** The peer suite (`npm run test:sdp-peer`): needs the SDP `run.sh` installs. */
export default defineConfig({
  test: {
    include: ["test/sdp-peer/**/*.test.ts"],
    globalSetup: ["test/global-setup.ts"],
    testTimeout: 900_000,
    hookTimeout: 120_000,
    pool: "forks",
  },
});
