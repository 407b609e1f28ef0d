import type { ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { GetObjectCommand, PutObjectCommand, S3Client } from "@aws-sdk/client-s3";
import { afterAll, beforeAll, expect, it } from "vitest";
import { cappedTempFolders, mountCappedFolder } from "../../support/capped-temp-folder.ts";
import { startRuntime, stopRuntime, type Banner } from "../../support/npm-start.ts";

/**
 * `npm start` on a data folder that fills up (a 48 MB tmpfs): the embedded S3 answers a write that
 * does not fit with 503 naming the folder and its free space, instead of dying on an unhandled
 * ENOSPC; it keeps serving what it holds; and Ctrl-C still stops everything within seconds.
 */

let child: ChildProcess;
let banner: Banner;
let folder: { dir: string; unmount(): void } | undefined;

beforeAll(async () => {
  if (!cappedTempFolders) return;
  folder = mountCappedFolder(48);
  ({ child, banner } = await startRuntime(["--data-dir", folder.dir]));
});

afterAll(async () => {
  if (child) await stopRuntime(child);
  folder?.unmount();
});

it.skipIf(!cappedTempFolders)(
  "a full disk answers 503 naming the folder, keeps serving reads, and npm start stops in seconds",
  async () => {
    const s3 = new S3Client({
      endpoint: banner.exports["AWS_ENDPOINT_URL_S3"]!,
      region: banner.exports["AWS_REGION"]!,
      credentials: banner.credentials,
      forcePathStyle: true,
      maxAttempts: 1,
    });
    const bucket = banner.exports["EBB_BUCKET"]!;
    const chunk = randomBytes(4 * 1024 * 1024);
    let refusal: unknown;
    let stored = 0;
    for (; stored < 40; stored++) {
      try {
        await s3.send(new PutObjectCommand({ Bucket: bucket, Key: `fill/${stored}`, Body: chunk }));
      } catch (error) {
        refusal = error;
        break;
      }
    }
    expect(refusal).toMatchObject({ name: "DataFolderFull", $metadata: { httpStatusCode: 503 } });
    expect((refusal as Error).message).toContain(folder!.dir);
    expect((refusal as Error).message).toMatch(/data folder is full .*MB free/);
    expect(stored).toBeGreaterThan(0);

    // Still serving what it holds, and the runtime still running.
    const first = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: "fill/0" }));
    expect(Buffer.from(await first.Body!.transformToByteArray()).equals(chunk)).toBe(true);
    expect(child.exitCode).toBeNull();

    const stopping = Date.now();
    await stopRuntime(child);
    expect(Date.now() - stopping).toBeLessThan(20_000);
  },
);
