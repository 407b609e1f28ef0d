import { GetObjectCommand, PutObjectCommand, S3ServiceException } from "@aws-sdk/client-s3";
import { describe, expect, it } from "vitest";
import { testAws, testObjectStore, testS3Client, uniquePrefix } from "../support/aws.ts";

const bytes = (text: string): Uint8Array => new TextEncoder().encode(text);
const text = (data: Uint8Array): string => new TextDecoder().decode(data);

/** The status and error code of a failed SDK call, or "ok". */
async function outcome(call: Promise<unknown>): Promise<string> {
  try {
    await call;
    return "ok";
  } catch (error) {
    if (error instanceof S3ServiceException) return `${error.$metadata.httpStatusCode} ${error.name}`;
    throw error;
  }
}

describe("conditional writes", () => {
  it("lets exactly one of 20 concurrent putIfAbsent writers create a key", async () => {
    const store = testObjectStore();
    const key = "_delta_log/00000000000000000001.json";
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) => store.putIfAbsent(key, bytes(`writer ${i}`))),
    );
    expect(results.filter((r) => r === "created")).toHaveLength(1);
    expect(results.filter((r) => r === "exists")).toHaveLength(19);
    // The winner's bytes, whole: no loser overwrote them.
    expect(text(await store.get(key))).toBe(`writer ${results.indexOf("created")}`);
  });

  it("answers 412 PreconditionFailed to all but one of 20 raw PutObject If-None-Match writers", async () => {
    const s3 = testS3Client();
    const { bucket } = testAws().storage;
    const key = `${uniquePrefix("if-none-match")}commit.json`;
    const put = (i: number) =>
      s3.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: `writer ${i}`, IfNoneMatch: "*" }));
    const outcomes = await Promise.all(Array.from({ length: 20 }, (_, i) => outcome(put(i))));
    expect(outcomes.filter((o) => o === "ok")).toHaveLength(1);
    expect(outcomes.filter((o) => o === "412 PreconditionFailed")).toHaveLength(19);
  });

  it("writes with If-Match only while the ETag is current", async () => {
    const s3 = testS3Client();
    const { bucket } = testAws().storage;
    const key = `${uniquePrefix("if-match")}_last_checkpoint`;
    const first = await s3.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: "v1" }));
    const second = await s3.send(
      new PutObjectCommand({ Bucket: bucket, Key: key, Body: "v2", IfMatch: first.ETag }),
    );
    expect(second.ETag).not.toBe(first.ETag);

    const stale = s3.send(
      new PutObjectCommand({ Bucket: bucket, Key: key, Body: "v3", IfMatch: first.ETag }),
    );
    expect(await outcome(stale)).toBe("412 PreconditionFailed");
    const stored = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
    expect(await stored.Body?.transformToString()).toBe("v2");
  });

  it("refuses If-Match on a key that does not exist", async () => {
    const { bucket } = testAws().storage;
    const put = new PutObjectCommand({
      Bucket: bucket,
      Key: `${uniquePrefix("if-match")}missing`,
      Body: "x",
      IfMatch: '"0"',
    });
    expect(await outcome(testS3Client().send(put))).toMatch(/^(412 PreconditionFailed|404 NoSuchKey)$/);
  });

  it("putIfMatch through the adapter: a stale ETag is a mismatch, the fresh one writes", async () => {
    const store = testObjectStore();
    const { etag: v1 } = await store.put("state", bytes("v1"));
    const written = await store.putIfMatch("state", bytes("v2"), v1);
    expect(written.outcome).toBe("written");
    expect(await store.putIfMatch("state", bytes("v3"), v1)).toEqual({ outcome: "etag-mismatch" });
    expect(text(await store.get("state"))).toBe("v2");
    expect((await store.head("state"))?.etag).toBe(written.outcome === "written" ? written.etag : undefined);
  });
});
