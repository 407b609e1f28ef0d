import { GetObjectCommand } from "@aws-sdk/client-s3";
import { SignatureV4 } from "@smithy/signature-v4";
import { describe, expect, it } from "vitest";
import { NodeSha256 } from "../../shared/store/node-sha256.ts";
import { testAws, testS3Client, uniquePrefix } from "../support/aws.ts";

/** One aws-chunked frame: size in hex, its signature (the stand-in, as S3 the header, checks the request's). */
const frame = (data: Buffer) =>
  Buffer.concat([
    Buffer.from(`${data.length.toString(16)};chunk-signature=${"0".repeat(64)}\r\n`),
    data,
    Buffer.from("\r\n"),
  ]);

describe("an aws-chunked upload (how Spark's S3A connector puts every object over HTTP)", () => {
  it("stores the payload, not the chunk framing", async () => {
    const { endpoints, storage } = testAws();
    const key = `${uniquePrefix("chunked")}part-0.parquet`;
    const payload = Buffer.from("PAR1 some parquet bytes PAR1");
    const body = Buffer.concat([
      frame(payload.subarray(0, 10)),
      frame(payload.subarray(10)),
      frame(Buffer.alloc(0)),
    ]);
    const url = new URL(`${endpoints.s3Endpoint}/${storage.bucket}/${key}`);
    const signer = new SignatureV4({
      service: "s3",
      region: endpoints.region,
      credentials: endpoints.credentials,
      sha256: NodeSha256 as never,
    });
    const signed = await signer.sign({
      method: "PUT",
      protocol: url.protocol,
      hostname: url.hostname,
      port: Number(url.port),
      path: url.pathname,
      headers: {
        host: url.host,
        "content-encoding": "aws-chunked",
        "content-length": String(body.length),
        "x-amz-decoded-content-length": String(payload.length),
        "x-amz-content-sha256": "STREAMING-AWS4-HMAC-SHA256-PAYLOAD",
      },
      body,
    });
    const put = await fetch(url, { method: "PUT", headers: signed.headers, body });
    expect(put.status).toBe(200);
    const got = await testS3Client().send(new GetObjectCommand({ Bucket: storage.bucket, Key: key }));
    expect(Buffer.from(await got.Body!.transformToByteArray()).toString()).toBe(payload.toString());
  });
});
