import { describe, expect, it, vi } from "vitest";
import { putInParts } from "../../shared/object-store/object-store.ts";
import { testObjectStore, testS3Client, uniquePrefix } from "../support/aws.ts";

/**
 * A batch's big data file goes up in parts while DuckDB writes it (streamed-file-upload.ts). A failure
 * after a part is uploaded and before the completion leaves no object under the key (so no reader or
 * later commit can see half a file) and no incomplete upload (its parts are aborted, not billed).
 * The embedded S3 does not list multipart uploads, so the test reads the requests Ebb sent; a task
 * killed outright never sends the abort, and the bucket's lifecycle rule removes its parts a day on.
 */
describe("a multipart upload that fails after a part", () => {
  it("leaves no object and no incomplete upload behind", async () => {
    const prefix = uniquePrefix("multipart-abort");
    const store = testObjectStore(prefix);
    const client = testS3Client();
    const sendSpy = vi.spyOn(client, "send");
    const part = new Uint8Array(6 * 1024 * 1024).fill(7);
    let sent = 0;
    async function* failingAfterTwoParts(): AsyncGenerator<Uint8Array> {
      yield part;
      yield part;
      sent = 2;
      throw new Error("the writer died between parts");
    }

    await expect(putInParts(store, "tables/t/part-0.parquet", failingAfterTwoParts())).rejects.toThrow(
      "the writer died between parts",
    );
    expect(sent).toBe(2);
    expect(await store.head("tables/t/part-0.parquet")).toBeUndefined();
    const sentCommands = sendSpy.mock.calls.map(([command]) => command.constructor.name);
    sendSpy.mockRestore();
    expect(sentCommands.filter((name) => name !== "HeadObjectCommand")).toEqual([
      "CreateMultipartUploadCommand",
      "UploadPartCommand",
      "UploadPartCommand",
      "AbortMultipartUploadCommand",
    ]);
  });
});
