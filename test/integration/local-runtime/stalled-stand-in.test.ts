import type { ChildProcess } from "node:child_process";
import { readFileSync } from "node:fs";
import { afterAll, beforeAll, expect, it } from "vitest";
import { processTree } from "../../support/listening-sockets.ts";
import { startRuntime, stopRuntime, type Banner } from "../../support/npm-start.ts";

/**
 * `npm start` with DynamoDB Local paused (SIGSTOP, as a stalled service or a network partition looks
 * to a client): an API call answers 503 TEMPORARILY_UNAVAILABLE with Retry-After within API Gateway's
 * 29 s instead of waiting for ever, and answers again once DynamoDB Local is back.
 */

let child: ChildProcess;
let banner: Banner;
let dynamoDbLocal: number | undefined;

beforeAll(async () => {
  ({ child, banner } = await startRuntime(["--data-dir", "memory"]));
  // The JVM itself, not the tether that started it (whose command line names the class too).
  [dynamoDbLocal] = processTree(child.pid!).filter(
    (pid) =>
      readFileSync(`/proc/${pid}/comm`, "utf8").trim() === "java" &&
      readFileSync(`/proc/${pid}/cmdline`, "utf8").includes("LoopbackDynamoDbLocal"),
  );
});

afterAll(async () => {
  if (dynamoDbLocal !== undefined) process.kill(dynamoDbLocal, "SIGCONT");
  await stopRuntime(child);
});

const listPipelines = () =>
  fetch(`${banner.exports["EBB_ENDPOINT"]}/api/2.0/pipelines`, {
    headers: { authorization: `Bearer ${banner.token}` },
  });

it("answers 503 with Retry-After while DynamoDB stalls, and 200 once it is back", async () => {
  if (dynamoDbLocal === undefined) throw new Error("no DynamoDB Local JVM under npm start");
  expect((await listPipelines()).status).toBe(200);

  process.kill(dynamoDbLocal, "SIGSTOP");
  const started = Date.now();
  const stalled = await listPipelines();
  const waited = Date.now() - started;
  expect(stalled.status).toBe(503);
  expect(stalled.headers.get("retry-after")).toMatch(/^\d+$/);
  expect(await stalled.json()).toMatchObject({ error_code: "TEMPORARILY_UNAVAILABLE" });
  expect(waited).toBeLessThan(29_000);

  process.kill(dynamoDbLocal, "SIGCONT");
  expect((await listPipelines()).status).toBe(200);
});
