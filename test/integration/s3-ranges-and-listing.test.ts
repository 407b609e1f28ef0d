import { GetObjectCommand, ListObjectsV2Command, PutObjectCommand } from "@aws-sdk/client-s3";
import { beforeAll, describe, expect, it } from "vitest";
import { listAllKeys } from "../../shared/object-store/object-store.ts";
import { testAws, testObjectStore, testS3Client, uniquePrefix } from "../support/aws.ts";

const bytes = (text: string): Uint8Array => new TextEncoder().encode(text);
const text = (data: Uint8Array): string => new TextDecoder().decode(data);

describe("suffix ranges", () => {
  it("GetObject with bytes=-N answers 206 with the last N bytes and their Content-Range", async () => {
    const { bucket } = testAws().storage;
    const key = `${uniquePrefix("range")}part-0.parquet`;
    const s3 = testS3Client();
    await s3.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: "0123456789" }));
    const out = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: key, Range: "bytes=-3" }));
    expect(out.$metadata.httpStatusCode).toBe(206);
    expect(out.ContentRange).toBe("bytes 7-9/10");
    expect(await out.Body?.transformToString()).toBe("789");
  });

  it("getRange through the adapter: suffix, suffix longer than the object, and a plain range", async () => {
    const store = testObjectStore();
    await store.put("footer", bytes("0123456789"));
    expect(text(await store.getRange("footer", { suffix: 4 }))).toBe("6789");
    expect(text(await store.getRange("footer", { suffix: 50 }))).toBe("0123456789");
    expect(text(await store.getRange("footer", { start: 2, end: 4 }))).toBe("234");
  });
});

describe("listing 2,500 keys under a prefix", () => {
  const prefix = uniquePrefix("listing");
  const keys = Array.from({ length: 2_500 }, (_, i) => `${String(i).padStart(5, "0")}.json`);

  beforeAll(async () => {
    const store = testObjectStore(prefix);
    // A few writers at a time: enough to be quick, few enough not to starve the stand-in.
    for (let i = 0; i < keys.length; i += 50) {
      await Promise.all(keys.slice(i, i + 50).map((key) => store.put(key, bytes(key))));
    }
  });

  it("pages through the adapter's list, with and without startAfter", async () => {
    const store = testObjectStore(prefix);
    const first = await store.list("");
    expect(first.objects).toHaveLength(1_000);
    expect(first.nextPageToken).toBeDefined();

    expect((await listAllKeys(store, "")).map((o) => o.key)).toEqual(keys);
    expect((await listAllKeys(store, "", { startAfter: keys[1_234] })).map((o) => o.key)).toEqual(
      keys.slice(1_235),
    );
    expect((await listAllKeys(store, "", { pageSize: 700 })).map((o) => o.key)).toEqual(keys);
  });

  it("pages through raw ListObjectsV2, with and without StartAfter", async () => {
    const s3 = testS3Client();
    const { bucket } = testAws().storage;
    const listAll = async (startAfter?: string): Promise<{ keys: string[]; pages: number }> => {
      const found: string[] = [];
      let token: string | undefined;
      let pages = 0;
      do {
        const out = await s3.send(
          new ListObjectsV2Command({
            Bucket: bucket,
            Prefix: prefix,
            StartAfter: startAfter,
            ContinuationToken: token,
          }),
        );
        pages++;
        found.push(...(out.Contents ?? []).map((o) => (o.Key ?? "").slice(prefix.length)));
        token = out.IsTruncated ? out.NextContinuationToken : undefined;
      } while (token);
      return { keys: found, pages };
    };
    expect(await listAll()).toEqual({ keys, pages: 3 });
    expect(await listAll(`${prefix}${keys[1_999]}`)).toEqual({ keys: keys.slice(2_000), pages: 1 });
  });
});

describe("listing order", () => {
  it("is UTF-8 byte order, also where a folder name is a prefix of a sibling key", async () => {
    const store = testObjectStore();
    // In byte order "-" (2d) < "." (2e) < "/" (2f) < "=" (3d), and any ASCII < "é".
    const keys = ["x", "x-y", "x.y", "x/a/b", "x/z", "x=1/part-0", "x=10/part-0", "xé"];
    await Promise.all([...keys].reverse().map((key) => store.put(key, bytes(key))));
    expect((await listAllKeys(store, "")).map((o) => o.key)).toEqual(keys);
    // One key per page: each page starts after the previous page's last key, so a misordered
    // listing would skip keys here.
    expect((await listAllKeys(store, "", { pageSize: 1 })).map((o) => o.key)).toEqual(keys);
    expect((await listAllKeys(store, "x/")).map((o) => o.key)).toEqual(["x/a/b", "x/z"]);
  });

  it("groups common prefixes with a delimiter", async () => {
    const prefix = uniquePrefix("delimiter");
    const s3 = testS3Client();
    const { bucket } = testAws().storage;
    for (const key of ["a/1", "a/2", "b", "c/d/e"]) {
      await s3.send(new PutObjectCommand({ Bucket: bucket, Key: `${prefix}${key}`, Body: key }));
    }
    const out = await s3.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: prefix, Delimiter: "/" }));
    expect(out.Contents?.map((o) => o.Key)).toEqual([`${prefix}b`]);
    expect(out.CommonPrefixes?.map((p) => p.Prefix)).toEqual([`${prefix}a/`, `${prefix}c/`]);
  });
});
