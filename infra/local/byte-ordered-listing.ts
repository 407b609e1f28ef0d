import { readdir } from "node:fs/promises";
import path from "node:path";
import type { FilesystemStore, ListedObject } from "s3rver";

/** How s3rver names the file holding an object's bytes: `<last key segment>._S3rver_object`. */
const OBJECT_SUFFIX = "._S3rver_object";

/**
 * Replaces s3rver's listObjects with one that lists in S3's order (UTF-8 byte order of the keys).
 * s3rver lists in the order it walks its folders, so a folder whose name is a prefix of a sibling's
 * comes first ("a/b" before "a-b", though "-" < "/"), and paging by the last key of a page then skips
 * keys. Same contract as the original: objects count toward `maxKeys`, common prefixes do not.
 */
export function listInByteOrder(store: FilesystemStore): void {
  store.listObjects = async (bucket, options) => {
    const { prefix = "", startAfter = "", delimiter = "", maxKeys = Infinity } = options;
    const after = Buffer.from(startAfter);
    const keys = (await keysUnder(store.getBucketPath(bucket), prefix))
      .map((key) => ({ key, bytes: Buffer.from(key) }))
      .filter(({ bytes }) => Buffer.compare(bytes, after) > 0)
      .sort((a, b) => Buffer.compare(a.bytes, b.bytes));

    const page: string[] = [];
    const commonPrefixes = new Set<string>();
    let isTruncated = false;
    for (const { key } of keys) {
      const cut = delimiter ? key.indexOf(delimiter, prefix.length) : -1;
      if (cut !== -1) {
        commonPrefixes.add(key.slice(0, cut + delimiter.length));
      } else if (page.length < maxKeys) {
        page.push(key);
      } else {
        isTruncated = true;
        break;
      }
    }
    const objects = await Promise.all(page.map((key) => listed(store, bucket, key)));
    return {
      objects: objects.filter((object): object is ListedObject => object !== undefined),
      commonPrefixes: [...commonPrefixes].sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b))),
      isTruncated,
    };
  };
}

/** Every key under `prefix`, found from the file names alone (metadata is read for one page only). */
async function keysUnder(bucketPath: string, prefix: string): Promise<string[]> {
  // Start in the deepest folder the prefix names: "tables/a/t/_delta_log/0" → "tables/a/t/_delta_log".
  const folder = prefix.slice(0, prefix.lastIndexOf("/") + 1);
  let names: string[];
  try {
    names = await readdir(path.join(bucketPath, folder), { recursive: true });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return [];
    throw error;
  }
  return names
    .filter((name) => name.endsWith(OBJECT_SUFFIX))
    .map((name) => folder + name.slice(0, -OBJECT_SUFFIX.length).split(path.sep).join("/"))
    .filter((key) => key.startsWith(prefix));
}

async function listed(
  store: FilesystemStore,
  bucket: string,
  key: string,
): Promise<ListedObject | undefined> {
  try {
    const metadata = await store.getMetadata(bucket, key);
    return {
      key,
      metadata,
      size: Number(metadata["content-length"]),
      lastModifiedDate: new Date(metadata["last-modified"] ?? 0),
    };
  } catch (error) {
    // Deleted since the folder was read.
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw error;
  }
}
